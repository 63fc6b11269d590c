"""TodoStore: replace, merge by id, validation, and the text re-injected after compression."""

from __future__ import annotations

import pytest

from hermes_agent.memory.todo import MAX_ITEMS, TodoError, TodoStore


def _ids(store):
    return [(it.id, it.content, it.status) for it in store.read()]


def test_write_replaces_the_list():
    s = TodoStore()
    s.write([{"id": "1", "content": "read code"}, {"id": "2", "content": "fix bug", "status": "in_progress"}])
    assert _ids(s) == [("1", "read code", "pending"), ("2", "fix bug", "in_progress")]
    s.write([{"id": "9", "content": "fresh start"}])
    assert _ids(s) == [("9", "fresh start", "pending")]


def test_merge_updates_by_id_and_appends_new_items():
    s = TodoStore()
    s.write([{"id": "1", "content": "read code"}, {"id": "2", "content": "fix bug"}])
    s.write([{"id": "1", "status": "completed"}, {"id": "3", "content": "write test"}], merge=True)
    assert _ids(s) == [("1", "read code", "completed"), ("2", "fix bug", "pending"),
                       ("3", "write test", "pending")]
    assert s.counts() == {"pending": 2, "in_progress": 0, "completed": 1, "cancelled": 0}


@pytest.mark.parametrize("todos, msg", [
    ([{"id": "1", "content": "x", "status": "done"}], "not one of"),
    ([{"content": "no id"}], "non-empty 'id'"),
    ([{"id": "1"}], "needs 'content'"),
    (["just a string"], "must be an object"),
    ([{"id": "1", "content": "x" * 4001}], "limit is 4000"),
    ([{"id": str(i), "content": "t"} for i in range(MAX_ITEMS + 1)], "limit is 256"),
])
def test_invalid_writes_are_refused_and_change_nothing(todos, msg):
    s = TodoStore()
    s.write([{"id": "keep", "content": "existing"}])
    with pytest.raises(TodoError, match=msg):
        s.write(todos)
    assert _ids(s) == [("keep", "existing", "pending")]


def test_render_for_context_lists_items_while_work_is_open():
    s = TodoStore()
    assert s.render_for_context() is None
    s.write([{"id": "1", "content": "plan", "status": "completed"},
             {"id": "2", "content": "build", "status": "in_progress"},
             {"id": "3", "content": "ship"}])
    text = s.render_for_context()
    assert text.splitlines()[1:] == ["[x] 1. plan", "[>] 2. build", "[ ] 3. ship"]
    s.write([{"id": "2", "status": "completed"}, {"id": "3", "status": "cancelled"}], merge=True)
    assert s.render_for_context() is None
