"""Importing countries and trade programmes: how a case, a pack and an answer name them, read one way.

A duty rate depends on where the goods are imported and under which programme
they enter: the same code is 6% under the US general rate, 0% under USMCA and
something else again in Canada. Cases, pack tables and answers spell these
freely ("Canada", "ca"; "CUSMA", "T-MEC", "usmca"), so every name is read here:
a country as its two-letter code, a programme as one key (upper case, letters
and digits only, the names of one agreement mapped to one key). The general
rate has no programme: "MFN", "general", "none" or "" name none.

Cases may say neither; ``country_from_tags`` and ``programme_from_tags`` read the
tags other suites use for them. Only exact tags count ("usmca", "country_ca",
"programme_gsp"): a tag such as "usmca_not_eligible" names no programme. Last,
``country_from_text`` and ``programme_from_text`` read the request as a broker
would: "imported into Canada", "USMCA-qualifying goods" — but not where the goods
come from ("made in Canada") nor a programme the text denies ("not USMCA
originating", "no GSP claim").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["DEFAULT_COUNTRY", "country_code", "country_from_tags", "country_from_text", "programme_from_tags",
           "programme_from_text", "programme_key", "programme_name"]

DEFAULT_COUNTRY = "US"
# Names of the countries whose suites and tables the project meets, besides their two-letter codes.
_COUNTRY_NAMES = {"USA": "US", "UNITEDSTATES": "US", "UNITEDSTATESOFAMERICA": "US", "CAN": "CA", "CANADA": "CA",
                  "MEX": "MX", "MEXICO": "MX"}
# Bare tags read as the importing country: names only ("can" or "mex" alone may mean something else).
_COUNTRY_TAGS = {"US", "USA", "UNITEDSTATES", "CA", "CANADA", "MX", "MEXICO"}
_COUNTRY_TAG = re.compile(r"(?:country|import(?:er|ing)?|destination|dest)[_:\- ]+(.+)", re.I)
# Words for the general (MFN, column 1) rate: no programme.
_GENERAL = {"", "NONE", "NA", "MFN", "GENERAL", "GENERALRATE", "NTR", "COLUMN1"}
# One agreement's names, and the programme a country's own scheme is (Canada's GPT is its GSP).
_ALIASES = {"CUSMA": "USMCA", "TMEC": "USMCA", "ACEUM": "USMCA", "NAFTA": "USMCA", "GPT": "GSP", "TPP11": "CPTPP"}
# How a country calls a programme in its own tariff.
_LOCAL_NAMES = {("USMCA", "CA"): "CUSMA", ("USMCA", "MX"): "T-MEC", ("GSP", "CA"): "GPT"}
# Programmes a bare tag may name; any other needs a prefixed tag ("programme_cafta_dr").
_KNOWN = {"USMCA", "GSP", "CPTPP", "CETA", "KORUS", "AGOA"}
_PROGRAMME_TAG = re.compile(r"(?:(?:trade[_ -]?)?programme|program|preference|tariff[_ -]treatment)[_:\- ]+(.+)",
                            re.I)


def _key(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", name.upper())


def country_code(name: str) -> str | None:
    """The two-letter code of a country named by its code or one of the names above (``None`` for anything else)."""
    key = _key(name)
    code = _COUNTRY_NAMES.get(key, key)
    return code if len(code) == 2 and code.isalpha() else None


def programme_key(name: str | None) -> str | None:
    """The programme's key ("CUSMA" → "USMCA"); ``None`` for the general rate (no name, "MFN", "general"…)."""
    if name is None:
        return None
    key = _key(name)
    return None if key in _GENERAL else _ALIASES.get(key, key)


def programme_name(key: str, country: str) -> str:
    """The programme as the importing country names it (USMCA is CUSMA in Canada)."""
    return _LOCAL_NAMES.get((key, country), key)


def country_from_tags(tags: Iterable[str], *, origin: str | None = None) -> str | None:
    """The first importing country a tag names ("canada", "country_ca", "import-us"). A tag naming the goods'
    origin is skipped: "canada" on a case of Canadian goods says where they come from, not where they go."""
    skip = country_code(origin) if origin else None
    for tag in tags:
        prefixed = _COUNTRY_TAG.fullmatch(tag.strip())
        code = country_code(prefixed.group(1)) if prefixed else country_code(tag) if _key(tag) in _COUNTRY_TAGS \
            else None
        if code is not None and code != skip:
            return code
    return None


def programme_from_tags(tags: Iterable[str]) -> str | None:
    """The first programme a tag names: a known one by name ("usmca", "CUSMA", "gsp"), any one with a prefix
    ("programme_cafta_dr", "tariff_treatment:gpt")."""
    for tag in tags:
        prefixed = _PROGRAMME_TAG.fullmatch(tag.strip())
        key = programme_key(prefixed.group(1) if prefixed else tag)
        if key is not None and (prefixed or key in _KNOWN):
            return key
    return None


# Where the goods are imported: a verb or noun of entry, then the country ("imported into Canada", "entry into the
# US", "for import to Mexico", "destined for Canada"), or a customs authority or tariff of that country.
_COUNTRY_WORDS = (r"(?:the\s+)?(?P<country>United\s+States(?:\s+of\s+America)?|USA|U\.S\.(?:A\.)?|US|Canada|"
                  r"Mexico)")
_IMPORT_INTO = re.compile(
    r"\b(?:import(?:ed|ing|s)?|entry|entered|entering|enter|clear(?:ed|ing)?|ship(?:ped|ping)?|destined|bound|"
    r"deliver(?:ed|y)?)\s+(?:(?:in)?to|for|at)\s+" + _COUNTRY_WORDS + r"(?![\w-])", re.I)
_AUTHORITY = {"CBSA": "CA", "CBP": "US", "HTSUS": "US", "CANADIAN CUSTOMS TARIFF": "CA", "SAT": "MX"}
_AUTHORITY_WORD = re.compile(r"\b(CBSA|CBP|HTSUS|Canadian\s+Customs\s+Tariff)\b", re.I)
# A programme named in the text, and the words that deny it just before or after.
_PROGRAMME_WORD = re.compile(r"(?<![\w-])(USMCA|CUSMA|T-MEC|NAFTA|GSP|CPTPP|CETA|KORUS|AGOA)(?![\w])", re.I)
_DENIED_BEFORE = re.compile(r"\b(?:not|no|non|without|never|ineligible\s+for|does\s+not\s+qualify\s+for|"
                            r"doesn't\s+qualify\s+for|excluded\s+from|outside)\b[\w\s-]{0,20}$", re.I)
_DENIED_AFTER = re.compile(r"^[\w\s:;,()-]{0,25}?\b(?:not\s+(?:eligible|applicable|claimed|qualifying|met)|"
                           r"ineligible|does\s+not\s+apply|is\s+not\s+claimed|not\s+qualify)", re.I)


def country_from_text(text: str) -> str | None:
    """The importing country the request names ("imported into Canada", "cleared by CBSA"), if it names one."""
    found = _IMPORT_INTO.search(text)
    if found:
        return country_code(found.group("country").replace(".", ""))
    authority = _AUTHORITY_WORD.search(text)
    return _AUTHORITY[re.sub(r"\s+", " ", authority.group(1)).upper()] if authority else None


def programme_from_text(text: str) -> str | None:
    """The first programme the request claims ("USMCA-qualifying", "entered under CUSMA"), skipping denied ones."""
    for found in _PROGRAMME_WORD.finditer(text):
        if _DENIED_BEFORE.search(text[:found.start()]) or _DENIED_AFTER.match(text[found.end():]):
            continue
        return programme_key(found.group(1))
    return None
