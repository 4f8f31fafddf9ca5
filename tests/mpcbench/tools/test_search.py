"""Tests for the word-based ranked search (``_text.rank``) and the search tools built on it: Slack, Gmail,
Drive and Contacts."""

from __future__ import annotations

import random
from zoneinfo import ZoneInfo

import pytest

from mpcbench_async._text import STOP_WORDS
from mpcbench_async.mpcbench.tools import rank, words
from tests.mpcbench.tools.conftest import make_backend

SLACK = {
    "users": [{"id": "U1", "name": "Alice Kim", "email": "alice@acme.io"},
              {"id": "U2", "name": "Bob Stone", "email": "bob@acme.io"},
              {"id": "U3", "name": "Jordan Lee", "email": "jordan@acme.io"},
              {"id": "U4", "name": "Dan Ray", "email": "dan@acme.io"}],
    "channels": [{"id": "C1", "name": "general"}, {"id": "C2", "name": "releases"}],
    "messages": [
        {"id": "m1", "channel_id": "C1", "user_id": "U1", "text": "We concatenate the logs nightly",
         "timestamp": "2025-11-10T09:00:00Z"},
        {"id": "m2", "channel_id": "C1", "user_id": "U2", "text": "My cat knocked the monitor over",
         "timestamp": "2025-11-11T09:00:00Z"},
        {"id": "m3", "channel_id": "C2", "user_id": "U1", "text": "Launching the billing API on Friday",
         "timestamp": "2025-11-12T09:00:00Z"},
        {"id": "m4", "channel_id": "C2", "user_id": "U3", "text": "Budget review for the launch is done",
         "timestamp": "2025-11-13T09:00:00Z", "thread_ts": "2025-11-13T08:00:00Z"},
        {"id": "m5", "channel_id": "C1", "user_id": "U4", "text": "Budget numbers are in",
         "timestamp": "2025-11-14T09:00:00Z"},
        {"id": "m6", "channel_id": "C1", "user_id": "U2", "text": "Two cats and a dog",
         "timestamp": "2025-11-15T09:00:00Z"},
    ],
}

GMAIL = {"threads": [
    {"id": "t1", "subject": "Q4 budget review", "messages": [
        {"from": "Alice Kim <alice@acme.io>", "to": ["bob@acme.io"], "date": "2025-11-10T09:00:00Z",
         "subject": "Q4 budget review", "body": "Please review the attached budget."}]},
    {"id": "t2", "subject": "Launch checklist", "messages": [
        {"from": "bob@acme.io", "to": ["alice@acme.io"], "cc": ["carol@partner.org"], "date": "2025-11-14T09:00:00Z",
         "subject": "Launch checklist", "body": "Checklist attached."},
        {"from": "alice@acme.io", "to": ["bob@acme.io"], "date": "2025-11-17T16:45:00Z",
         "subject": "Re: Launch checklist", "body": "Looks good, ship the budget figures too."}]},
    {"id": "t3", "subject": "Lunch on Friday", "messages": [
        {"from": "Jordan Lee <jordan@acme.io>", "to": ["alice@acme.io"], "date": "2025-11-18T12:00:00Z",
         "subject": "Lunch on Friday", "body": "Pizza?"}]},
]}

DRIVE = {"files": [
    {"id": "f1", "name": "Q4 Budget.xlsx", "mimeType": "application/vnd.ms-excel",
     "modifiedTime": "2025-11-01T10:00:00Z", "content": "Line items and totals"},
    {"id": "f2", "name": "Launch plan", "mimeType": "application/vnd.google-apps.document",
     "modifiedTime": "2025-11-05T10:00:00Z", "content": "The launch budget is approved; rollout in three waves."},
    {"id": "f3", "name": "Team offsite", "mimeType": "application/vnd.google-apps.document",
     "modifiedTime": "2025-11-07T10:00:00Z", "content": "Agenda: hiking, rollout retro."},
]}

CONTACTS = {"contacts": [
    {"name": "Alice Kim", "email": "alice@acme.io", "organization": "Acme", "title": "PM", "phone": ""},
    {"name": "Alicia Moss", "email": "alicia@partner.org", "organization": "Partner"},
    {"name": "Bob Stone", "email": "bob@acme.io", "organization": "Acme", "title": "Engineer",
     "phone": "+44 20 1234"},
]}


def _backend(**overrides):
    sources = {"slack": SLACK, "gmail": GMAIL, "drive": DRIVE, "contacts": CONTACTS}
    return make_backend(**{**sources, **overrides})


def _ids(result, key):
    return [item["id"] for item in result[key]]


class TestWords:
    def test_lower_case_words_with_inner_apostrophes(self):
        """Words are lower-cased runs of letters and digits; underscores and punctuation split them."""
        assert ["don't", "ship", "v2", "api", "launch", "plan", "q4"] == words("Don’t ship v2-API launch_plan (Q4)!")


class TestRank:
    RECORDS = [{"id": 1, "text": "concatenate the files", "t": "2025-01-01"},
               {"id": 2, "text": "the cat sat", "t": "2025-01-02"},
               {"id": 3, "text": "catalogue of launches", "t": "2025-01-03"},
               {"id": 4, "text": "launch the cat", "t": "2025-01-04"}]

    def _rank(self, query):
        return [r["id"] for _, r in rank(self.RECORDS, query, lambda r: [(r["text"], 1.0)], recency=lambda r: r["t"])]

    def test_short_words_match_whole_words_only(self):
        """A three-letter word matches only itself, never inside a longer word such as 'concatenate'."""
        assert [4, 2] == self._rank("cat")

    def test_words_of_four_letters_or_more_match_as_prefixes(self):
        """'launch' matches 'launches' as a prefix, but not text in the middle of a word."""
        assert [4, 3] == self._rank("launch")

    def test_more_matched_words_rank_higher(self):
        """A record matching two query words outranks newer records matching one."""
        assert [2, 4] == self._rank("sat cat")

    def test_ties_go_to_the_newest(self):
        """Records with equal scores come newest first."""
        assert [4, 3] == self._rank("launch")

    def test_stop_words_are_ignored_unless_the_query_is_only_stop_words(self):
        """'the' alone matches records containing 'the'; beside other words it is dropped."""
        assert ([4, 2, 1], [4, 2]) == (self._rank("the"), self._rank("the cat"))

    def test_empty_query_matches_all_newest_first(self):
        """An empty query returns every record with score 0, newest first."""
        assert [(0.0, 4), (0.0, 3), (0.0, 2), (0.0, 1)] == [
            (s, r["id"]) for s, r in rank(self.RECORDS, "", lambda r: [(r["text"], 1.0)], recency=lambda r: r["t"])]

    def test_field_weights_and_phrase_bonus(self):
        """Scores add field weights per matched word, a phrase bonus, and 10 per distinct matched word."""
        records = [{"a": "launch plan", "b": "plan"}]
        assert [27.0] == [s for s, _ in rank(records, "launch plan", lambda r: [(r["a"], 2.0), (r["b"], 1.0)])]

    def test_limit(self):
        """limit keeps only the best results."""
        assert [4] == [r["id"] for _, r in rank(self.RECORDS, "cat", lambda r: [(r["text"], 1.0)],
                                                 recency=lambda r: r["t"], limit=1)]

    def test_a_word_written_twice_counts_twice(self):
        """Each query word as written adds its field's weight (10 per distinct word matched on top)."""
        records = [{"a": "launch plan"}]
        assert [26.0, 14.0] == [s for q in ("plan plan launch", "plan plan") for s, _ in
                                rank(records, q, lambda r: [(r["a"], 2.0)])]

    def test_scores_and_order_are_those_of_matching_word_by_word(self):
        """Against matching every query word against every text one by one (the definition): the same scores and
        order on seeded random records and queries — prefixes, repeats, stop words, odd weights, long queries."""
        rng = random.Random(31)
        vocabulary = ("launch launches launching lunch plan planning plans cat cats catalogue the of budget "
                      "budgets bud release released rel api apis q4 2025 über überall naïve").split()

        def text() -> str:
            return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 12)))

        for _ in range(300):
            records = [{"a": text(), "b": text(), "t": rng.random()} for _ in range(rng.randint(1, 8))]
            query = " ".join(rng.choice(vocabulary) for _ in range(rng.choice((1, 2, 3, 40, 80))))
            weights = (rng.choice((3.0, 0.1, 1 / 3)), rng.choice((1.0, 0.7)))

            def fields(r, w=weights):
                return [(r["a"], w[0]), (r["b"], w[1])]

            assert _by_word(records, query, fields) == rank(records, query, fields, recency=lambda r: r["t"])


def _by_word(records, query, fields):
    """``rank``'s definition, a query word at a time (the implementation before issue 31's set intersections)."""
    terms = [w for w in words(query) if w not in STOP_WORDS] or words(query)
    phrase = " ".join(words(query))
    scored = []
    for index, record in enumerate(records):
        score, matched = 0.0, set()
        for text, weight in fields(record):
            found = words(text)
            for term in terms:
                if term in found or (len(term) >= 4 and any(w.startswith(term) for w in found)):
                    score += weight
                    matched.add(term)
            if phrase and len(terms) > 1 and phrase in " ".join(found):
                score += weight
        if terms and not matched:
            continue
        scored.append((score + 10.0 * len(matched), record["t"], -index, record))
    scored.sort(key=lambda item: item[:3], reverse=True)
    return [(score, record) for score, _, _, record in scored]


class TestSlackSearchMessages:
    def test_cat_does_not_match_concatenate_or_cats(self):
        """'cat' finds the message with the word cat only."""
        result = _backend().call("Slack_search_messages", {"query": "cat"})
        assert (["m2"], 1) == (_ids(result, "messages"), result["total_matches"])

    def test_prefix_match_for_long_words(self):
        """'launch' finds 'Launching' and 'launch'; the newer message comes first on equal scores."""
        result = _backend().call("Slack_search_messages", {"query": "launch"})
        assert ["m4", "m3"] == _ids(result, "messages")

    def test_more_matched_words_rank_higher(self):
        """A message with both 'budget' and 'review' outranks a newer one with only 'budget'."""
        result = _backend().call("Slack_search_messages", {"query": "budget review"})
        assert ["m4", "m5"] == _ids(result, "messages")

    def test_results_name_author_and_channel(self):
        """Each result carries author name and email, channel name, local timestamp, text and thread stamp."""
        result = _backend().call("Slack_search_messages", {"query": "review"})
        expected = {"messages": [{"id": "m4", "channel": "releases", "author": "Jordan Lee",
                                  "author_email": "jordan@acme.io", "timestamp": "2025-11-13T09:00:00+00:00",
                                  "text": "Budget review for the launch is done",
                                  "thread_ts": "2025-11-13T08:00:00+00:00"}],
                    "total_matches": 1}
        assert expected == result

    def test_author_and_channel_names_are_searched(self):
        """Words of the author's name and the channel's name match too."""
        backend = _backend()
        assert (["m6", "m2"], ["m4", "m3"]) == (
            _ids(backend.call("Slack_search_messages", {"query": "Stone"}), "messages"),
            _ids(backend.call("Slack_search_messages", {"query": "releases"}), "messages"))

    def test_limit_is_honoured_and_total_reported(self):
        """limit caps the results while total_matches counts all matches."""
        result = _backend().call("Slack_search_messages", {"query": "budget launch cat", "limit": 2})
        assert (["m4", "m5"], 4) == (_ids(result, "messages"), result["total_matches"])

    @pytest.mark.parametrize("channel", ["general", "#general", "GENERAL", "C1"])
    def test_channel_filter(self, channel):
        """channel keeps messages of that channel, by name with or without # or by id."""
        result = _backend().call("Slack_search_messages", {"query": "budget launch", "channel": channel})
        assert ["m5"] == _ids(result, "messages")

    @pytest.mark.parametrize("user", ["Bob", "bob stone", "Stone Bob", "bob@acme.io", "U2"])
    def test_user_filter(self, user):
        """user keeps messages by that person, by name, reversed name, email or id."""
        result = _backend().call("Slack_search_messages", {"query": "cat cats monitor", "user": user})
        assert ["m2", "m6"] == _ids(result, "messages")

    def test_unknown_user_author_falls_back_to_the_id(self):
        """A message by a user missing from the users list names its user id as author."""
        slack = {"messages": [{"id": "x", "channel_id": "C9", "user_id": "U9", "text": "hello there",
                               "timestamp": "2025-11-10T09:00:00Z"}]}
        result = _backend(slack=slack).call("Slack_search_messages", {"query": "hello"})
        assert [("C9", "U9", None)] == [(m["channel"], m["author"], m["author_email"]) for m in result["messages"]]

    def test_ties_go_to_the_newest_instant_across_offsets(self):
        """Equal-score messages come newest first even when their stamps carry different offsets."""
        slack = {"messages": [
            {"id": "older", "channel_id": "C1", "user_id": "U1", "text": "deploy",
             "timestamp": "2025-11-19T10:00:00+09:00"},
            {"id": "newer", "channel_id": "C1", "user_id": "U1", "text": "deploy", "timestamp": "2025-11-19T05:00:00Z"},
        ]}
        result = _backend(slack=slack).call("Slack_search_messages", {"query": "deploy"})
        assert ["newer", "older"] == _ids(result, "messages")

    def test_user_filter_does_not_match_inside_other_names(self):
        """user='Dan' keeps Dan Ray's messages and not those of Jordan Lee."""
        result = _backend().call("Slack_search_messages", {"query": "budget", "user": "Dan"})
        assert ["m5"] == _ids(result, "messages")


class TestGmailSearchThreads:
    def test_ranked_by_words_in_subject_and_body(self):
        """Threads match on subject (weighted higher) and body words; ties newest first."""
        result = _backend().call("Gmail_SearchThreads", {"query": "budget"})
        assert (["t1", "t2"], 2) == (_ids(result, "threads"), result["total_matches"])

    def test_result_shape(self):
        """A result lists id, subject, sorted senders, message count, last local date and the last body."""
        result = _backend().call("Gmail_SearchThreads", {"query": "checklist"})
        expected = [{"id": "t2", "subject": "Launch checklist", "participants": ["alice@acme.io", "bob@acme.io"],
                     "message_count": 2, "last_date": "2025-11-17T16:45:00+00:00",
                     "snippet": "Looks good, ship the budget figures too."}]
        assert expected == result["threads"]

    def test_no_query_lists_all_newest_first(self):
        """Without a query every thread is listed, most recent last message first."""
        assert ["t3", "t2", "t1"] == _ids(_backend().call("Gmail_SearchThreads", {}), "threads")

    @pytest.mark.parametrize(("sender", "expected"), [("alice", ["t2", "t1"]), ("Alice Kim", ["t1"]),
                                                      ("jordan@acme.io", ["t3"]), ("nobody", [])])
    def test_sender_filter(self, sender, expected):
        """sender keeps threads with a message from that person, by name (where the From line has one) or email."""
        assert expected == _ids(_backend().call("Gmail_SearchThreads", {"sender": sender}), "threads")

    @pytest.mark.parametrize(("recipient", "expected"), [("carol@partner.org", ["t2"]), ("bob", ["t2", "t1"])])
    def test_recipient_filter_reads_to_and_cc(self, recipient, expected):
        """recipient keeps threads with a message to or cc that person."""
        assert expected == _ids(_backend().call("Gmail_SearchThreads", {"recipient": recipient}), "threads")

    @pytest.mark.parametrize(("after", "before", "expected"), [
        ("2025-11-15", None, ["t3", "t2"]),
        ("2025-11-17", None, ["t3", "t2"]),
        ("2025-11-18", None, ["t3"]),
        (None, "2025-11-10", ["t1"]),
        (None, "2025-11-14", ["t2", "t1"]),
        ("2025-11-11", "2025-11-16", ["t2"]),
        ("-3d", None, ["t3", "t2"]),
        ("yesterday", None, ["t3"]),
    ])
    def test_after_and_before_are_inclusive_days(self, after, before, expected):
        """after/before keep threads with a message on or after / on or before the day, relative days allowed."""
        args = {k: v for k, v in (("after", after), ("before", before)) if v}
        assert expected == _ids(_backend().call("Gmail_SearchThreads", args), "threads")

    def test_day_filters_use_the_scenario_zone(self):
        """A message at 02:00Z on the 19th is on the 18th in New York, so before=2025-11-18 keeps it."""
        ny = ZoneInfo("America/New_York")
        gmail = {"threads": [{"id": "late", "subject": "x", "messages": [
            {"from": "a@x.io", "to": ["b@x.io"], "date": "2025-11-19T02:00:00Z", "body": "x"}]}]}
        result = _backend(gmail=gmail, tz=ny).call("Gmail_SearchThreads", {"before": "2025-11-18"})
        assert [("late", "2025-11-18T21:00:00-05:00")] == [(t["id"], t["last_date"]) for t in result["threads"]]

    def test_max_results(self):
        """max_results caps the threads while total_matches counts all."""
        result = _backend().call("Gmail_SearchThreads", {"max_results": 1})
        assert (["t3"], 3) == (_ids(result, "threads"), result["total_matches"])

    def test_bad_date_is_an_error(self):
        """An unreadable after date comes back as an error naming the tool."""
        result = _backend().call("Gmail_SearchThreads", {"after": "last tuesday"})
        assert {"error": "Gmail.SearchThreads: cannot read the date 'last tuesday'; use YYYY-MM-DD, an ISO datetime, "
                         "today, tomorrow, yesterday, this_week, next_week, last_week, +Nd/-Nd (days from today)"
                } == result

    def test_sender_filter_does_not_match_inside_other_names(self):
        """sender='dan' does not select Jordan's thread."""
        assert [] == _ids(_backend().call("Gmail_SearchThreads", {"sender": "dan"}), "threads")


class TestGmailGetThread:
    def test_known_thread_in_full(self):
        """A thread id gives every message with sender, recipients, cc, local date, subject and body."""
        expected = {"id": "t1", "subject": "Q4 budget review", "messages": [
            {"from": "Alice Kim <alice@acme.io>", "to": ["bob@acme.io"], "cc": [], "date": "2025-11-10T09:00:00+00:00",
             "subject": "Q4 budget review", "body": "Please review the attached budget."}]}
        assert expected == _backend().call("Gmail_GetThread", {"thread_id": "t1"})

    def test_unknown_thread_is_an_error(self):
        """An unknown thread id gives an error pointing to the search tool."""
        expected = {"error": "no thread with id 'nope'; use Gmail_SearchThreads to find thread ids"}
        assert expected == _backend().call("Gmail_GetThread", {"thread_id": "nope"})


class TestDriveSearch:
    def test_name_matches_outrank_content_matches(self):
        """'budget' in a file name outranks 'budget' in another file's content."""
        result = _backend().call("GoogleDrive_gdrive_search", {"query": "budget"})
        assert (["f1", "f2"], 2) == (_ids(result, "files"), result["total_matches"])

    def test_content_matches_newest_first(self):
        """Files matching on content alone, with equal scores, come newest first."""
        assert ["f3", "f2"] == _ids(_backend().call("GoogleDrive_gdrive_search", {"query": "rollout"}), "files")

    def test_result_shape_and_limit(self):
        """A result gives id, name, mime type, local modified time and a snippet; limit caps the list."""
        result = _backend().call("GoogleDrive_gdrive_search", {"query": "rollout", "limit": 1})
        expected = {"files": [{"id": "f3", "name": "Team offsite", "mimeType": "application/vnd.google-apps.document",
                               "modifiedTime": "2025-11-07T10:00:00+00:00",
                               "snippet": "Agenda: hiking, rollout retro."}],
                    "total_matches": 2}
        assert expected == result


class TestDriveReadFile:
    EXPECTED = {"id": "f2", "name": "Launch plan", "mimeType": "application/vnd.google-apps.document",
                "modifiedTime": "2025-11-05T10:00:00+00:00",
                "content": "The launch budget is approved; rollout in three waves."}

    def test_by_id(self):
        """A file id reads the whole file."""
        assert self.EXPECTED == _backend().call("GoogleDrive_gdrive_read_file", {"file_id": "f2"})

    def test_by_exact_name_ignoring_case(self):
        """An exact file name, in any case, reads the file too."""
        assert self.EXPECTED == _backend().call("GoogleDrive_gdrive_read_file", {"file_id": "launch PLAN"})

    def test_partial_name_or_unknown_id_is_an_error(self):
        """A partial name or unknown id gives an error pointing to the search tool."""
        backend = _backend()
        expected = [{"error": f"no file with id or name {x!r}; use GoogleDrive_gdrive_search to find files"}
                    for x in ("Launch", "f9")]
        assert expected == [backend.call("GoogleDrive_gdrive_read_file", {"file_id": x}) for x in ("Launch", "f9")]


class TestContactsSearch:
    def test_by_first_name(self):
        """'Alice' finds Alice Kim and not Alicia; empty fields are left out."""
        expected = {"contacts": [{"name": "Alice Kim", "email": "alice@acme.io", "organization": "Acme",
                                  "title": "PM"}]}
        assert expected == _backend().call("GoogleContacts_SearchContactsByName", {"name": "Alice"})

    def test_by_full_name_prefix(self):
        """'alic' (four letters) matches both Alice and Alicia as a prefix, in list order."""
        result = _backend().call("GoogleContacts_SearchContactsByName", {"name": "alic"})
        assert ["Alice Kim", "Alicia Moss"] == [c["name"] for c in result["contacts"]]

    def test_by_email_ranks_the_owner_first(self):
        """An email address finds its owner first; colleagues sharing only the domain rank below."""
        result = _backend().call("GoogleContacts_SearchContactsByName", {"name": "bob@acme.io"})
        assert [{"name": "Bob Stone", "email": "bob@acme.io", "organization": "Acme", "title": "Engineer",
                 "phone": "+44 20 1234"}, {"name": "Alice Kim", "email": "alice@acme.io", "organization": "Acme",
                                          "title": "PM"}] == result["contacts"]

    def test_limit_and_no_match(self):
        """limit caps the contacts; a name nobody has gives an empty list."""
        backend = _backend()
        assert ([["Alice Kim"]], {"contacts": []}) == (
            [[c["name"] for c in backend.call("GoogleContacts_SearchContactsByName",
                                              {"name": "acme", "limit": 1})["contacts"]]],
            backend.call("GoogleContacts_SearchContactsByName", {"name": "Zelda"}))
