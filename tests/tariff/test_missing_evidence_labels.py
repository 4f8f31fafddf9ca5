"""The missing-evidence detector against labelled request texts: relies on an unsupplied document, or not.

A request relies on a document when it points to one for facts the classification needs. Listing boilerplate
that mentions papers, manuals, pictures or attached parts does not. The "does not rely" texts include real
attribute shapes of the HSCodeComp listings (``"Machinery Test Report":"Available"``, ``"Size":"See picture for
details"``) and product names whose words look like documents ("document pocket", "drawing board").
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


class TestLabelledRequests:
    def test_the_set_is_large_and_balanced(self):
        """At least 60 labelled texts, with at least 25 on each side."""
        assert (True, True, True) == (len(RELIES) + len(DOES_NOT_RELY) >= 60, len(RELIES) >= 25,
                                      len(DOES_NOT_RELY) >= 25)

    @pytest.mark.parametrize("text", RELIES)
    def test_relies_on_a_missing_document(self, text):
        """A request that points to an unsupplied document for facts is detected."""
        assert references_missing_document(text, []) is not None

    @pytest.mark.parametrize("text", DOES_NOT_RELY)
    def test_does_not_rely_on_a_document(self, text):
        """Listing boilerplate and product names that mention documents are not reliance."""
        assert references_missing_document(text, []) is None

    def test_agreement_is_total(self):
        """Every labelled text gets its label (100% agreement)."""
        wrong = [t for t in RELIES if references_missing_document(t, []) is None]
        wrong += [t for t in DOES_NOT_RELY if references_missing_document(t, []) is not None]
        assert [] == wrong

    @pytest.mark.parametrize("text", RELIES[:6])
    def test_supplied_evidence_is_the_document(self, text):
        """When the request carries evidence, the document counts as supplied."""
        assert references_missing_document(text, ["Lab analysis: 62% polyester, 38% cotton."]) is None

    @pytest.mark.parametrize(("text", "phrase"), [
        (RELIES[0], "as per the attached lab report"),
        (RELIES[3], "given in the attached UN 38.3 test report"),
        (RELIES[10], "Lab report attached"),
        (RELIES[12], "Please find attached"),
        (RELIES[19], "see attached"),
    ])
    def test_the_phrase_relied_on_is_returned(self, text, phrase):
        """The detector returns the phrase by which the request relies on the document (it goes in the critique)."""
        assert phrase == references_missing_document(text, [])

    def test_scanning_around_anchor_words_finds_what_a_full_scan_finds(self, monkeypatch):
        """Only the text around document and attachment words is scanned; that never changes the answer."""
        texts = RELIES + DOES_NOT_RELY + [c.input.input for c in load_suite(REPO / "storage" / "benchmarks" / "tariff"
                                                                            / "cases")]
        windowed = [references_missing_document(t, []) for t in texts]
        monkeypatch.setattr(_dossier, "_windows", lambda text: [(0, len(text))])
        assert [references_missing_document(t, []) for t in texts] == windowed
