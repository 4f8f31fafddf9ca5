"""People in the oracle agent's conversation: names a text may give, and the contacts they refer to."""

from __future__ import annotations

import re
from typing import Any

from ._state import WORD, State, words

__all__ = ["NOT_NAMES", "known_contacts", "name_candidates", "resolve"]

# Capitalised words that are not people: greetings, calendar words, team and product nouns, tool names.
NOT_NAMES = frozenset(
    "hi hello hey dear thanks thank please regards best cheers sounds great good perfect yes no ok okay sure also "
    "just quick agreed the a an this that these those next last our my your we i you they all everyone team "
    "could can would should will let lets shall may might do does did is are was were be it its if when what "
    "which who how why where there here and or but so for with about from to of in on at by re fwd fw subject "
    "agenda notes update meeting sync call session review planning invite invitation reminder heads up "
    "monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun today tomorrow "
    "january february march april may june july august september october november december "
    "product project engineering design sales marketing finance security operations ops people support "
    "customer customers client leads manager management calendar notifications system training office "
    "slack gmail google drive jira zoom teams meet figma confluence api qa hr it ceo cto pm "
    "main new old feature release launch sprint weekly week morning afternoon evening".split())


def name_candidates(text: str) -> list[str]:
    """Runs of one to three capitalised words that may be a person (``@Jordan``, ``Alice``, ``Sam Williams``)."""
    found: list[str] = []
    run: list[str] = []
    last_end = 0
    for match in WORD.finditer(text):
        token = re.sub(r"['’](?:s|m|ll|re|d|ve)$", "", match.group(0))  # "Tom's" → Tom, "Let's" → Let
        is_name = (token[0].isupper() and (len(token) == 1 or not token[1:].isupper())
                   and token.lower() not in NOT_NAMES and len(token) > 1)
        joined = text[last_end:match.start()] == " "
        if is_name and run and joined and len(run) < 3:
            run.append(token)
        else:
            if run:
                found.append(" ".join(run))
            run = [token] if is_name else []
        last_end = match.end()
    if run:
        found.append(" ".join(run))
    return list(dict.fromkeys(found))


def resolve(candidate: str, contacts: list[dict[str, Any]], known_emails: set[str]) -> dict[str, Any] | None:
    """The contact a name or first name refers to: given name equal, every word present; thread members first."""
    wanted = words(candidate)
    if not wanted:
        return None
    matches = [c for c in contacts if (name := words(str(c.get("name", ""))))
               and name[0] == wanted[0] and set(wanted) <= set(name)]
    matches.sort(key=lambda c: str(c.get("email", "")).lower() not in known_emails)
    return matches[0] if matches else None


def known_contacts(state: State) -> list[dict[str, Any]]:
    return state.items("GoogleContacts_SearchContactsByName", "contacts")
