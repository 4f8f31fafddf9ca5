"""``runtime.Memo``: a bounded memo, by entries and by bytes, the oldest out first."""

from __future__ import annotations

import pickle

from mpcbench_async.runtime import Memo


def test_a_kept_value_is_given_back_and_counted():
    memo: Memo[str, str] = Memo(max_entries=4, max_bytes=100)
    memo.put("a", "A", 10)
    assert ("A", None, 1, 10) == (memo.get("a"), memo.get("b"), memo.hits, memo.size)


def test_a_second_value_for_a_key_does_not_replace_the_first():
    memo: Memo[str, str] = Memo(max_entries=4, max_bytes=100)
    memo.put("a", "first", 10)
    memo.put("a", "second", 20)
    assert ("first", 1, 10) == (memo.get("a"), len(memo), memo.size)


def test_past_its_entries_the_oldest_leaves_first():
    memo: Memo[int, int] = Memo(max_entries=3, max_bytes=100)
    for key in range(5):
        memo.put(key, key * 10, 1)
    assert ([None, None, 20, 30, 40], 3) == ([memo.get(k) for k in range(5)], memo.size)


def test_past_its_bytes_the_oldest_leave_until_the_new_one_fits():
    """A hit does not move an entry (no lock on look-ups): the oldest put is the first out."""
    memo: Memo[str, str] = Memo(max_entries=10, max_bytes=100)
    memo.put("a", "A", 40)
    memo.put("b", "B", 40)
    assert "A" == memo.get("a")
    memo.put("c", "C", 50)
    assert ([None, "B", "C"], 90) == ([memo.get(k) for k in "abc"], memo.size)
    memo.put("d", "D", 95)
    assert ([None, None, None, "D"], 95) == ([memo.get(k) for k in "abcd"], memo.size)


def test_a_value_larger_than_the_whole_bound_is_never_kept():
    memo: Memo[str, str] = Memo(max_entries=10, max_bytes=100)
    memo.put("a", "A", 60)
    memo.put("huge", "H", 101)
    assert ("A", None, 60) == (memo.get("a"), memo.get("huge"), memo.size)


def test_it_pickles_as_an_empty_memo_of_the_same_bounds():
    """Sent to a Ray worker with the agent stage holding it: the worker keeps its own (a lock does not pickle)."""
    memo: Memo[str, str] = Memo(max_entries=3, max_bytes=50)
    memo.put("a", "A", 10)
    copy = pickle.loads(pickle.dumps(memo))
    assert (3, 50, 0, None) == (copy.max_entries, copy.max_bytes, len(copy), copy.get("a"))
    copy.put("b", "B", 10)
    assert "B" == copy.get("b")
