"""The missing-evidence detector against labelled request texts: relies on an unsupplied document or picture, or not.

A request relies on a document when it points to one for facts the classification needs, and on a picture when the
sender supplied it ("the photo I sent") or asks about the goods in it ("the HS code for the item in the photo").
Listing boilerplate that mentions papers, manuals, pictures or attached parts does not, nor do pictures that only
illustrate ("Color: see attached photos", "images for reference only"). The "does not rely" texts include real
attribute shapes of the HSCodeComp listings (``"Machinery Test Report":"Available"``, ``"Size":"See picture for
details"``) and product names whose words look like documents ("document pocket", "drawing board").

How agreement is measured: each labelled text is given to ``references_missing_document`` with no evidence; it
agrees when the detector returns a phrase for a RELIES text and None for a DOES_NOT_RELY text. Agreement is
correct/total, over the whole set and over the second set alone (the texts written in real listing and request
styles). Texts it gets wrong are listed in KNOWN_MISSES and asserted exactly: fixing one or adding one fails a test.
"""

from __future__ import annotations

import pytest

from mpcbench_async.tariff import _dossier, load_suite
from mpcbench_async.tariff._dossier import references_missing_document
from tests.conftest import REPO

RELIES = [
    "Women's knitted pullover sweater, long sleeves. Fibre content as per the attached lab report. Please classify.",
    "Men's lace-up sneaker with rubber outsole. Upper materials and their surface-area shares are shown in the "
    "attached spec sheet. Value USD 30 per pair.",
    "Set of three saucepans for household use; the body metal (stainless steel or aluminium alloy) is stated in the "
    "enclosed mill certificate. Please classify and give the duty rate.",
    "Rechargeable battery packs for cordless vacuum cleaners, 21.6 V. The cell chemistry is given in the attached "
    "UN 38.3 test report. What's the HTS code?",
    "Classify per the attached spec sheet.",
    "See the enclosed lab report for the fibre content.",
    "Footwear with textile uppers; composition per the attached lab report.",
    "Please classify the item described in the attached PDF.",
    "Woven shirt; fabric composition: see lab report.",
    "Knit top. Composition per the test report (not included here).",
    "Lab report attached. Knit top, crew neck.",
    "Photos attached — please tell me the HTS code.",
    "Please find attached the technical data sheet for our pump.",
    "Attached please find the bill of materials for the cable assembly.",
    "I have attached the drawings; please classify the bracket.",
    "We've uploaded the product specification sheet.",
    "Dimensions and materials as shown in the attached drawing.",
    "Refer to the datasheet for the power rating and classify the adapter.",
    "The alloy grade is specified in the supplier's certificate.",
    "Materials: see attached.",
    "Construction details are in the attached tech pack.",
    "Fibre breakdown according to the laboratory analysis we sent earlier.",
    "Classify based on the specifications in the attachment.",
    "Value and composition per invoice.",
    "The hang tag shows the fibre content (photo attached).",
    "Upper and sole materials are documented in our technical file.",
    "HS code please. Specs in the enclosed datasheet.",
    "Fabric weight and weave are confirmed by the mill's test certificate.",
    "As per attached, the product is a smart watch band; classify it.",
    "The motor rating appears in the attached nameplate photo.",
    "Please review the uploaded images and classify.",
    "Please classify the product according to the drawings we sent.",
    "Material composition is listed on the attached sheet.",
    "Fabric content: see test results.",
    "HTS? Details in the attached file.",
    "For the fibre content please check the enclosed documents.",
    "The BOM is attached; classify the PCB assembly.",
    "Please rely on the attached SDS for the chemical composition.",
    "Classify using the information in the attached brochure.",
    "Our engineering drawing (enclosed) gives the dimensions.",
    "Specifications: as attached.",
    "Please see the datasheet for voltage and classify.",
    "Composition according to the enclosed certificate of analysis.",
    "Refer to attachment for the full product description.",
    "Need the 10-digit code; product specs are in the enclosed PDF.",
    "What is the duty? The fibre test results are attached.",
    '{"product": "cable assembly", "materials": "see attached BOM"}',
    "Please see attached for details of the alloy.",
]

DOES_NOT_RELY = [
    '{"Origin":"Mainland China","Sold in":"sell_by_piece","Machinery Test Report":"Available"}',
    '{"Package size - height (cm)":"15","Sold in":"sell_by_piece","Machinery Test Report":"ISO 9001"}',
    '"Machinery Test Report":"yes"',
    "Machinery Test Report: Available",
    "Floral summer dress with attached hang tag.",
    '{"Recommend Age":"14+y","Certification":"CE","Brand Name":"NoEnName_Null"}',
    '"Charging Method":"Wireless","Certification":"CE,FCC"',
    '"Sold in":"sell_by_piece","Certification":"None"',
    "Certification: CE",
    '{"Place Of Origin":"China","Video outgoing-inspection":"Available","each pack":"1"}',
    "Video outgoing-inspection: Provided",
    "Bluetooth speaker, comes with user manual and USB cable.",
    '"Package List":"Charging Cable,User Manual"',
    '"Accessory Type":"Smart Watch,Box,User manual,Cable"',
    '"Item Weight":"3","Certificate":"Yes","Certificate Type":"Third Party Appraisal"',
    '"CertificateType":"GDTC","Ring For Women":"925 Sterling Silver Ring"',
    '"Size":"See picture for details","Package size - length (cm)":"15"',
    '"Colors":"See picture","Package weight":"0.1"',
    '"Size":"Please check the photos below","Fine or Fashion":"Fashion"',
    '"Color":"As shown","Material":"100% Polyester"',
    '"Color":"as picture show","Custom":"yes","Material":"Plastic"',
    '"Shape":"As Picture","Occasion":"party"',
    '"Pendant Size":"as picture"',
    '"Image Type":"Reference Images","Applicable Season":"Four Seasons"',
    '"Product Care Instructions":"Machine Wash","Hooded":"No"',
    '"Package Includes":"Batteries,Operating Instructions,Original Box,Remote Controller,charger"',
    "Excavator Attachments 305/307 Compactor Attachment for CAT305/307 Excavators USA Warehouse Free Shipping",
    '"Use":"attachment","Showroom Location":"US"',
    '"Number of Loudspeaker Enclosure":"2","Support Apt-x":"No"',
    '"Wholesale Business":"Available-Please contact us"',
    '"Customize":"Support, contact us get more details and discount"',
    '"Warning":"Magic instruction , no props,No gimmicks"',
    '"Included Additional Item Description":"Earring+Necklace+Bracelet"',
    '"Is Batteries Included":"No","Is Bulbs Included":"No"',
    "Hooded parka with attached hood and detachable faux-fur trim.",
    "Nail clipper set with attached nail file.",
    "Flat hand tool with attached metal file and wooden handle.",
    "A4 ring binder with attached document pocket.",
    "Kids' drawing board with attached pen.",
    "Wooden photo frame, holds 4x6 pictures.",
    "Spec sheet: upper 70% polyester mesh, 30% TPU overlays; outsole rubber.",
    "Per the spec sheet below: 100% cotton jersey, 180 g/m2.",
    "No lab report is available; the care label says 100% cotton.",
    "Men's T-shirt, knitted jersey. The supplier invoice says '100% cotton'.",
    "Toy building blocks, tested according to EN 71 and ASTM F963.",
    "Made according to EU specifications.",
    "Test report available on request.",
    "CE certificate included in the package.",
    "Instructions provided in the manual.",
    "Please refer to the size chart in the pictures before ordering.",
    "Woven label attached to the inside seam.",
    "Drawstring bag with enclosed pocket.",
    "Leather wallet with photo window and attached key ring.",
    "Report cover, A4, clear PVC.",
    "Data cable with attached connectors, 1 m.",
    "Enclosed motor housing, IP54, for garden pumps.",
    "Comes with a certificate of authenticity.",
    "With enclosed warranty card.",
    "Sold with a printed user manual and a test certificate.",
    "Classify the attached mini speaker (the speaker is clipped to a lanyard).",
    "Photo studio backdrop, 150x210 cm, polyester.",
    "A pencil drawing tutorial book with love: a pencil drawing cute animal.",
    "Hot Sale 34cm Drawing Ruler Artist Pantograph Folding Ruler Reducer Enlarger Tool",
    "Handheld game console with HDMI out; see description.",
    "Stainless steel watch, see-through case back.",
    "The spec sheet lists the fabric as 65% polyester, 35% cotton.",
    "Smart watch: tracks heart rate, check the sleep report in the app.",
    "According to our records, the item ships from Guangdong.",
    "Phone case with attached card holder.",
    "Item comes with attached tag and original packaging; photos of the actual product.",
    "Real photos, no filter.",
    "Bed sheet set with attached elastic corners.",
    "Attached is a pendant of sterling silver on a 45 cm chain.",
    "No lab report attached; the label says 100% cotton.",
    "Without the attached spec sheet, classify from the description: mesh upper, rubber sole.",
]


# The second set, written in the styles of real marketplace listings (AliExpress and Amazon titles, bullets and
# "Key: Value" attribute blocks) and of importers' e-mails and chats to a customs broker, with near-misses on both
# sides: the same words relied on in a request and illustrative in a listing.
SECOND_RELIES = [
    # The issue's own examples.
    "the item in the picture I uploaded",
    "per the attached spec sheet, what is the code",
    "what's the code for the thing in the photo I sent",
    "see my uploaded image",
    "as shown in the image I've attached",
    # Importers' e-mails and chat messages to a broker.
    "Hi, could you let me know the HTS code for the product in the attached photo? Thanks, Maria",
    "Hello, what HS code should we use for the item in the picture? It ships next week from Ningbo.",
    "Can you classify the part shown in the drawing I sent yesterday?",
    "I've attached a few pictures of the item. Can you tell me the duty rate?",
    "Please see the attached commercial invoice and packing list and advise HTS codes for each line.",
    "Attached is the spec sheet for our new LED panel light. What HTS would apply?",
    "We are importing the items listed in the enclosed proforma invoice; please classify them.",
    "Good morning, I attach the product data sheet and the MSDS. Could you confirm the tariff classification?",
    "A photo of the rating plate is attached. What's the HTS for this motor?",
    "Screenshot of the Amazon listing attached - what HS code would this fall under?",
    "Need HTS for the product in this photo asap",
    "What is the duty on the shoes in the pictures?",
    "Composition: as per the label photo I sent.",
    "Fabric content is on the care label, see photo attached.",
    "The goods are as shown in the catalogue pages we emailed last week; please classify them.",
    "What is this? (photo attached) We need the HS code for the customs entry.",
    "Could you check the pictures I've sent over and let me know the commodity code?",
    "The customer's PO and the technical drawing are attached. Please provide the HTS number.",
    "Voltage and wattage are printed on the nameplate, photo enclosed.",
    "Can you tell me the tariff code for the item on the screenshot?",
    "For the specs please refer to the product sheet I forwarded.",
    "Attaching the BOM and the assembly drawing - need the HS classification for the finished harness.",
    "Model number is on the label in the photo I uploaded; what's the HTS?",
    "Hi team, the fibre content for these hoodies is only on the supplier's test report. HTS please?",
    "Please classify the watch in the image below.",
    "whats the hs code for this? pic attached",
    "Kindly refer to the enclosed technical specification and revert with the applicable HS code.",
    "Could you please classify the attached?",
    "The bag in my photos is the one we want to import; what's the duty rate?",
    "Please look at the pictures in the attachment and tell me which heading applies.",
    "As per the uploaded drawings, what HS code applies to this bracket?",
    "Please see the photos. What's the HS code?",
    "Our supplier sent the test certificate; the steel grade is on it. What duty applies?",
    # Near-misses of listing texts in DOES_NOT_RELY: the same words, but the facts are only in the picture.
    "Material: see attached photos. Please classify.",
    "Size and material: see attached pictures.",
    "Photos attached show the care label with the fibre content.",
    "Photos attached for your reference. Please advise the HTS.",
    "Calibration range is given in the attached test report.",
    "Classify the item in the picture.",
    "See the photos I uploaded and advise the tariff code.",
    "What is the HTS code for the keychain in the photo?",
    # Further requests.
    "Hi, please find the product photos in the attachment and let me know the HS code.",
    "Could you have a look at the picture and tell me what tariff code applies?",
    "Item: see pic. HS code?",
    "The label in the second image shows the fibre content; please classify accordingly.",
    "Pls advise HS code for the attached item photos",
    "We need the HTS for the goods described in the attached PO.",
    "Details of the product are in the spreadsheet I shared on Monday.",
    "All specs are in the link I sent, please classify.",
    "The composition is printed on the sewn-in label (see the photo).",
    "Please refer to the images in my previous email for the material of the sole.",
    "Attached you will find pictures of the sample. What heading would it fall under?",
    "Enclosed are the drawings and the material certificate.",
    "Re: HTS query - as discussed, the item is in the photos attached to my previous email.",
    "Sending over the spec sheet now, can you classify once you have it?",
    "Please classify per the enclosed samples' test reports.",
    "What's the HS code for the blue one in the pic?",
    "The fabric details are shown on the hangtag - photo uploaded to the portal.",
    "Can you help with the HS code? All the info is in the PDF.",
    "Refer to pic 3 for the fibre composition label.",
    "The material breakdown is in the tech pack our designer sent.",
]

SECOND_DOES_NOT_RELY = [
    # The issue's own examples.
    "Color: see attached photos. Material: 100% polyester. Size: S-XXL.",
    "images for reference only",
    "Size: see picture",
    "Note: pictures are for illustration purposes only.",
    "Package includes: 1 x bag (no retail box). Photos attached show actual colour.",
    "Colour may vary slightly from the photos due to monitor settings.",
    "Please refer to the size chart image before ordering.",
    "Certificate: CE",
    # AliExpress attribute blocks: pictures answer colour, size and style; the listing states the material.
    '{"Color":"see attached photos","Material":"Cotton","Sleeve Length(cm)":"Full"}',
    '"Main Color":"As The Pictures Show","Material":"Alloy","Style":"Trendy"',
    "Colour: As shown in the attached pictures",
    "Style: refer to the uploaded images; Material: genuine leather; Lining: polyester",
    "Color: see attached.",
    "Size: please refer to the attached size chart (unit: cm)",
    '"Size":"see the attached size chart","Gender":"Women"',
    "Pendant Size: as picture; Chain Length: 45 cm; Certificate: GIA",
    "Frame colour: see uploaded pictures; lens material: polycarbonate",
    "Material: 100% cotton (see label in photos). Color: see attached photos.",
    "Colors as the pic show. Each pack 1 pc.",
    "Size: as per picture (1-2 cm error due to manual measurement)",
    "Classify this e-commerce listing to its 10-digit US HTS code.\nTitle: Women's Summer Dress\nAttributes:\n"
    "- Color: see attached photos\n- Material: Polyester",
    # Listing free text: Amazon bullets and AliExpress descriptions.
    "Real photos attached, for reference only. 1 pc per pack.",
    "Photos we uploaded are of the actual product, no filter.",
    "The item in the picture is for display only; the stand is not included.",
    "You will receive the item in the picture.",
    "Custom Photo Necklace Personalized Picture Pendant - send us your photo after ordering",
    "Personalized photo blanket: upload your picture at checkout and we print it on soft flannel.",
    "QR code keychain, engraved; see photos for style options.",
    "Free shipping, duty paid; see the pictures for colours.",
    "Import duties, taxes and charges are not included in the item price. See the pictures for the exact item.",
    "Note: Due to the different display and lighting, the actual colour may differ slightly from the pictures.",
    "Datasheet available on request.",
    "Comes with attached test report and calibration certificate.",
    "Supplied with enclosed installation drawings and user manual.",
    "Please check the photos below for more details.",
    "As the pictures show, the bag has 3 compartments.",
    "We attach a test certificate to every batch shipped.",
    "Kids drawing tablet, LCD writing board with attached stylus; images for reference only.",
    "Note: Accessories in the photos are not included.",
    "Pls see the pics for the details, thanks for your understanding.",
    "Please refer to the size chart in the last picture; our sizes run small.",
    "【What You Get】1 x bottle, 1 x brush. See pictures for details.",
    "Specifications: see the table below",
    # Requests that state the facts themselves; the pictures they mention are not needed.
    "Hello, the HTS for a stainless steel water bottle please; photos on our website show the vacuum insulation.",
    "What's the HTS code for a 304 stainless steel vacuum flask? Colour: see attached photos.",
    "HS code for the ceramic mug please - the photo I sent only shows the colour.",
    "Please classify: stainless steel kitchen knife, 20 cm blade; pictures are for illustration only.",
    "What's the duty rate for a cotton T-shirt? The item in the photo is just an example.",
    "HTS code for picture frames, 4x6, MDF with glass front?",
    "What is the HS code for an image sensor module, 12 MP, MIPI interface?",
    "Classify the photo printer shown in the specs below: thermal dye-sublimation, 4x6 prints.",
    # Further listing texts and requests.
    "Main Stone Color: see picture; Metal Color: gold; Material: 925 sterling silver",
    '"Pattern Type":"as the picture","Fabric Type":"Broadcloth"',
    "Actual Images: yes. Picture Contents: Landscape.",
    "1. Our photos are taken in natural light. 2. Please allow slight colour difference.",
    "Size chart in the pictures is in cm, please measure before ordering.",
    "Free replacement if the item differs from the photos.",
    "Please send us a photo of the damage and we will refund.",
    "Photo studio light box, 40 cm, with attached LED strips; see pictures for setup.",
    "Classify this e-commerce listing to its 10-digit US HTS code.\nTitle: Custom Photo Keychain Personalized Picture "
    "Pendant, send us your photo\nAttributes:\n- Material: Acrylic",
    "The jacket in the pictures is worn by a 175 cm model wearing size M.",
    "Item as described and shown in photos. Brand new in box.",
    "Photos sent to you before shipping for confirmation.",
    "We will send you the photos of the actual item before shipping.",
    "Datasheet: see the link in the description",
    "What HTS code applies to a digital photo frame with 10-inch LCD and Wi-Fi?",
    "Classify: men's 100% cotton knit polo shirt. Pictures attached are just examples of the style.",
    "HS code for a stainless steel tumbler? No photos available, but it is double-walled and vacuum insulated.",
    "Please check the tracking link we sent you after dispatch.",
    "Color: Black/White/Red (see photo 2 for the black one)",
    "Please note: the watch band in the photos is not included.",
    "Gift box as shown in the last picture is optional (+$2).",
    "We provide a certificate of authenticity and a gemstone report with every ring.",
    "See our store for more designs. Photos taken by ourselves.",
    "Wholesale: send your design picture and we will make the sample.",
    "Specification sheet: included in the box.",
    "HS Code: 6109100010 (see declaration attached to the parcel).",
    "For the material, please refer to the product description above.",
    "Instructions: see the pictures for installation steps.",
    "Is the stand in the picture included? No, only the lamp.",
]

# Texts the detector gets wrong, each with why. Asserted exactly (test_agreement_is_total_but_for_the_known_misses).
KNOWN_MISSES = [
    # The fact is only on the label in the photo, but the pointer "(see the photo)" comes with no classification
    # question and names no fact after it; "Material: 100% cotton (see label in photos)" reads the same way.
    "The composition is printed on the sewn-in label (see the photo).",
]
ALL_RELIES = RELIES + SECOND_RELIES
ALL_DOES_NOT_RELY = DOES_NOT_RELY + SECOND_DOES_NOT_RELY


def _params(texts: list[str]) -> list:
    """The texts as test parameters, a known miss marked as a strict expected failure."""
    return [pytest.param(t, marks=pytest.mark.xfail(strict=True, reason="known miss")) if t in KNOWN_MISSES else t
            for t in texts]


def _wrong(relies: list[str], does_not_rely: list[str]) -> list[str]:
    """The labelled texts the detector disagrees with."""
    return ([t for t in relies if references_missing_document(t, []) is None]
            + [t for t in does_not_rely if references_missing_document(t, []) is not None])


class TestLabelledRequests:
    def test_the_set_is_large_and_balanced(self):
        """At least 120 labelled texts, 40 of them in the second set, with at least 25 on each side of each set."""
        assert (True, True, True, True) == (
            len(ALL_RELIES) + len(ALL_DOES_NOT_RELY) >= 120, len(SECOND_RELIES) + len(SECOND_DOES_NOT_RELY) >= 40,
            min(len(RELIES), len(DOES_NOT_RELY)) >= 25, min(len(SECOND_RELIES), len(SECOND_DOES_NOT_RELY)) >= 25)

    def test_the_second_set_is_new_and_no_text_is_labelled_twice(self):
        """No text of the second set is in the first, and no text appears twice in the whole set."""
        texts = ALL_RELIES + ALL_DOES_NOT_RELY
        assert (set(), len(texts)) == (set(RELIES + DOES_NOT_RELY) & set(SECOND_RELIES + SECOND_DOES_NOT_RELY),
                                       len(set(texts)))

    @pytest.mark.parametrize("text", _params(ALL_RELIES))
    def test_relies_on_a_missing_document(self, text):
        """A request that points to an unsupplied document or picture for facts is detected."""
        assert references_missing_document(text, []) is not None

    @pytest.mark.parametrize("text", _params(ALL_DOES_NOT_RELY))
    def test_does_not_rely_on_a_document(self, text):
        """Listing boilerplate, illustrative pictures and product names that mention documents are not reliance."""
        assert references_missing_document(text, []) is None

    def test_agreement_is_total_but_for_the_known_misses(self):
        """Every labelled text gets its label except exactly the known misses (whole set and second set)."""
        assert (KNOWN_MISSES, KNOWN_MISSES) == (_wrong(ALL_RELIES, ALL_DOES_NOT_RELY),
                                                _wrong(SECOND_RELIES, SECOND_DOES_NOT_RELY))

    def test_the_first_set_agrees_totally(self):
        """Every text of the first set gets its label (100% agreement)."""
        assert [] == _wrong(RELIES, DOES_NOT_RELY)

    @pytest.mark.parametrize("text", RELIES[:6] + SECOND_RELIES[:6])
    def test_supplied_evidence_is_the_document(self, text):
        """When the request carries evidence, the document counts as supplied."""
        assert references_missing_document(text, ["Lab analysis: 62% polyester, 38% cotton."]) is None

    @pytest.mark.parametrize(("text", "phrase"), [
        (RELIES[0], "as per the attached lab report"),
        (RELIES[3], "given in the attached UN 38.3 test report"),
        (RELIES[10], "Lab report attached"),
        (RELIES[12], "Please find attached"),
        (RELIES[19], "see attached"),
        ("the item in the picture I uploaded", "picture I uploaded"),
        ("What is the HTS code for the keychain in the photo?", "in the photo"),
        ("A photo of the rating plate is attached. What's the HTS for this motor?",
         "photo of the rating plate is attached"),
    ])
    def test_the_phrase_relied_on_is_returned(self, text, phrase):
        """The detector returns the phrase by which the request relies on the document (it goes in the critique)."""
        assert phrase == references_missing_document(text, [])

    def test_scanning_around_anchor_words_finds_what_a_full_scan_finds(self, monkeypatch):
        """Only the text around document, picture and attachment words is scanned; that never changes the answer."""
        suites = [REPO / "storage" / "benchmarks" / name / "cases" for name in ("tariff", "hscodecomp")]
        texts = ALL_RELIES + ALL_DOES_NOT_RELY + [c.input.input for suite in suites for c in load_suite(suite)]
        windowed = [references_missing_document(t, []) for t in texts]
        monkeypatch.setattr(_dossier, "_windows", lambda text: [(0, len(text))])
        assert [references_missing_document(t, []) for t in texts] == windowed
