"""`list` printed in bounded memory prints exactly what the whole-list view prints.

The reference is `ListView.show` over the whole list (what `list` printed before it
streamed, and still prints for tables and `--known`): the streamed output must be byte for
byte the same, in both orders, for every streaming format, however the tasks are cut into
pages, sorted runs and writes. Then what happens when a page fails half way, and when the
reader of stdout goes away.
"""

from __future__ import annotations

import heapq
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptask.errors import ProtocolViolation, UnreachableError
from mcptask.operations.listing import newest_first_key, task_pages
from mcptask.output import list_stream, sorted_runs
from mcptask.output.screen import Screen
from mcptask.output.sorted_runs import SortedRuns
from mcptask.output.views.list_tasks import Listing, ListView
from mcptask.protocol import Task

FORMATS = ("jsonl", "ids", "json")

# Timestamps that tie, that are unreadable or absent, in other offsets, at the ends of time.
timestamps = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "2026-11-30T06:00:00Z",
            "2026-11-30T06:00:00.000001Z",
            "2026-11-30T07:00:00+01:00",  # the same instant as the first
            "2026-11-30T05:59:59.999999-00:00",
            "0001-01-01T00:00:00+05:00",  # before datetime.min in UTC
            "9999-12-31T23:59:59-05:00",  # after datetime.max in UTC
            "not a time",
            "2026-11-30T06:00:00",  # no offset: unreadable as an instant
            "",
        ]
    ),
    st.datetimes(timezones=st.just(UTC)).map(lambda moment: moment.isoformat()),
)
# Server text: markup, escape sequences, newlines, bidi controls, non-ASCII, lone surrogates.
texts = st.text(
    alphabet=st.characters(codec=None, categories=None, exclude_characters=None), max_size=12
) | st.sampled_from(["[bold]x[/bold]", "\x1b[31mred\x1b[0m", "a\nb", "\u202eevil", "\udc9b", "é"])
extras = st.dictionaries(
    st.sampled_from(["result", "error", "vendor", "resultType"]),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
        max_leaves=8,
    ),
    max_size=2,
)


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    fields: dict[str, object] = {"taskId": draw(texts), "status": draw(st.sampled_from(STATUSES))}
    created = draw(timestamps)
    if created is not None:
        fields["createdAt"] = created
    if draw(st.booleans()):
        fields["statusMessage"] = draw(texts)
    fields["ttl"] = draw(st.none() | st.integers(min_value=0, max_value=10**9))
    fields.update(draw(extras))
    task = Task.read(fields)
    assert task is not None
    return task


STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


def cut(items: list[Task], sizes: list[int]) -> list[list[Task]]:
    """`items` as pages of the given sizes (the last page takes the rest; empty pages too)."""
    pages, start = [], 0
    for size in sizes:
        pages.append(items[start : start + size])
        start += size
    pages.append(items[start:])
    return pages


def whole_list_output(output: str, shown: list[Task]) -> str:
    screen = Screen(output, stdout=io.StringIO(), stderr=io.StringIO())
    ListView(screen).show(Listing(shown, transport="http", filtered=False, joined=False))
    assert isinstance(screen.stdout, io.StringIO)
    return screen.stdout.getvalue()


def streamed_output(
    output: str, pages: list[list[Task]], *, newest: bool, limit: int | None = None
) -> tuple[str, str]:
    screen = Screen(output, stdout=io.StringIO(), stderr=io.StringIO())
    about = Listing([], transport="http", filtered=False, joined=False)
    ListView(screen).stream(
        iter(pages), about, sort_key=newest_first_key if newest else None, limit=limit
    )
    assert isinstance(screen.stdout, io.StringIO)
    assert isinstance(screen.stderr, io.StringIO)
    return screen.stdout.getvalue(), screen.stderr.getvalue()


def old_newest_first(items: list[Task]) -> list[Task]:
    """How `list` sorted before it streamed: by the parsed datetime, stable, newest first."""
    oldest = datetime.min.replace(tzinfo=UTC)
    return sorted(items, key=lambda task: task.created or oldest, reverse=True)


# -- the sorted runs -----------------------------------------------------------------------------


def assert_a_stable_sort(items: list[tuple[int, str]], run_size: int, limit: int | None) -> None:
    """SortedRuns gives the texts as a stable sort, largest key first, would (at most `limit`)."""
    with SortedRuns(limit=limit, run_size=run_size) as runs:
        for key, text in items:
            runs.add(key, text)
        merged = list(runs.merged())
    expected = [text for _, text in sorted(items, key=lambda item: item[0], reverse=True)]
    assert merged == expected[:limit]


@settings(max_examples=300)
@given(
    items=st.lists(
        st.tuples(st.integers(-3, 3) | st.integers(-(2**63), 2**63 - 1), texts), max_size=60
    ),
    run_size=st.integers(2, 9),
    limit=st.none() | st.integers(1, 70),
)
def test_sorted_runs_are_a_stable_sort_largest_first(
    items: list[tuple[int, str]], run_size: int, limit: int | None
) -> None:
    assert_a_stable_sort(items, run_size, limit)


@settings(max_examples=300)
@given(
    keys=st.lists(st.integers(0, 5), max_size=60),
    descending=st.booleans(),
    run_size=st.integers(2, 9),
    limit=st.none() | st.integers(1, 70),
)
def test_sorted_runs_of_keys_in_order_either_way_are_a_stable_sort(
    keys: list[int], descending: bool, run_size: int, limit: int | None
) -> None:
    """What a server listing in creation order brings: runs whose keys do not overlap (read
    one after another) but may tie at their edges."""
    items = [(key, f"t{number}") for number, key in enumerate(sorted(keys, reverse=descending))]
    assert_a_stable_sort(items, run_size, limit)


def test_runs_that_do_not_overlap_are_read_without_a_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_merge(*args: object, **kwargs: object) -> None:
        raise AssertionError("merged")

    monkeypatch.setattr(heapq, "merge", no_merge)  # as sorted_runs calls it
    with SortedRuns(run_size=4) as runs:
        for number in range(10):
            runs.add(number, f"t{number}")
        assert list(runs.merged()) == [f"t{number}" for number in range(9, -1, -1)]
    with SortedRuns(run_size=4) as runs:
        for number in range(10):
            runs.add(number % 3, f"t{number}")
        with pytest.raises(AssertionError, match="merged"):
            list(runs.merged())


def test_sorted_runs_keep_text_a_server_sent_as_it_is() -> None:
    odd = ["lone \ud800 surrogate", "nul \x00 inside", "emoji \U0001f600", ""]
    with SortedRuns(run_size=2) as runs:
        for number, text in enumerate(odd):
            runs.add(number, text)
        assert runs.spilled
        assert list(runs.merged()) == odd[::-1]


def test_sorted_runs_spill_to_disk_only_when_they_must() -> None:
    with SortedRuns(run_size=4) as runs:
        for number in range(10):
            runs.add(number % 3, f"t{number}")
        assert runs.spilled  # ten pieces, four in memory at most
        assert list(runs.merged()) == ["t2", "t5", "t8", "t1", "t4", "t7", "t0", "t3", "t6", "t9"]
    with SortedRuns(run_size=4, limit=2) as runs:
        for number in range(100):
            runs.add(number, f"t{number}")
        assert not runs.spilled  # a small limit stays in memory
        assert list(runs.merged()) == ["t99", "t98"]


@settings(max_examples=300)
@given(st.lists(tasks(), max_size=30))
def test_the_newest_first_key_orders_as_the_datetimes_did(items: list[Task]) -> None:
    by_key = sorted(items, key=newest_first_key, reverse=True)
    assert [id(task) for task in by_key] == [id(task) for task in old_newest_first(items)]


# -- streamed output is the whole-list output ------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(tasks(), max_size=25),
    sizes=st.lists(st.integers(0, 7), max_size=6),
    output=st.sampled_from(FORMATS),
    run_size=st.integers(2, 6),
    limit=st.none() | st.integers(1, 30),
)
def test_newest_first_streams_exactly_what_the_whole_list_prints(
    items: list[Task], sizes: list[int], output: str, run_size: int, limit: int | None
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sorted_runs, "RUN_SIZE", run_size)
        patch.setattr(list_stream, "WRITE_SIZE", 64)
        streamed, _ = streamed_output(output, cut(items, sizes), newest=True, limit=limit)
    assert streamed == whole_list_output(output, old_newest_first(items)[:limit])


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(tasks(), max_size=25),
    sizes=st.lists(st.integers(0, 7), max_size=6),
    output=st.sampled_from(FORMATS),
    spool=st.sampled_from([16, 1 << 20]),
)
def test_the_servers_order_streams_exactly_what_the_whole_list_prints(
    items: list[Task], sizes: list[int], output: str, spool: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(list_stream, "SPOOL_SIZE", spool)  # 16: the document goes to disk
        streamed, _ = streamed_output(output, cut(items, sizes), newest=False)
    assert streamed == whole_list_output(output, items)


@pytest.mark.parametrize("output", FORMATS)
@pytest.mark.parametrize("newest", [True, False])
def test_an_empty_list_prints_the_empty_output_and_says_why(output: str, newest: bool) -> None:
    streamed, warned = streamed_output(output, [[], []], newest=newest)
    assert streamed == whole_list_output(output, [])
    assert "no tasks; likely reasons:" in warned


def test_the_servers_order_prints_each_page_as_it_comes() -> None:
    screen = Screen("jsonl", stdout=io.StringIO(), stderr=io.StringIO())
    about = Listing([], transport="http", filtered=False, joined=False)
    seen_before_each_page: list[str] = []

    def pages() -> Iterator[list[Task]]:
        for number in range(3):
            assert isinstance(screen.stdout, io.StringIO)
            seen_before_each_page.append(screen.stdout.getvalue())
            yield [make(f"t{number}")]

    ListView(screen).stream(pages(), about, sort_key=None)
    assert [text.count("\n") for text in seen_before_each_page] == [0, 1, 2]


# -- failures half way ---------------------------------------------------------------------------


def make(task_id: str, created: str = "2026-11-30T06:00:00Z") -> Task:
    return Task(task_id, "working", createdAt=created)


def failing_after(pages: int, error: Exception) -> Iterator[list[Task]]:
    for number in range(pages):
        yield [make(f"p{number}-a"), make(f"p{number}-b")]
    raise error


@pytest.mark.parametrize("output", ["jsonl", "ids"])
def test_a_failed_page_after_printed_ones_says_the_list_is_incomplete(output: str) -> None:
    screen = Screen(output, stdout=io.StringIO(), stderr=io.StringIO())
    about = Listing([], transport="http", filtered=False, joined=False)
    failure = UnreachableError("cannot connect to http://127.0.0.1:1/mcp: Connection refused")
    with pytest.raises(UnreachableError) as raised:
        ListView(screen).stream(failing_after(2, failure), about, sort_key=None)
    assert isinstance(screen.stdout, io.StringIO)
    printed = screen.stdout.getvalue().splitlines()
    assert len(printed) == 4  # the two pages before the failure, whole lines
    if output == "jsonl":
        assert [json.loads(line)["taskId"] for line in printed][-1] == "p1-b"
    assert raised.value.message == (
        "cannot connect to http://127.0.0.1:1/mcp: Connection refused "
        "(after 4 tasks were printed: the list is incomplete)"
    )


@pytest.mark.parametrize(
    ("output", "newest"), [("json", False), ("json", True), ("jsonl", True), ("ids", True)]
)
def test_a_failed_page_prints_nothing_when_the_output_waits_for_the_last(
    output: str, newest: bool
) -> None:
    screen = Screen(output, stdout=io.StringIO(), stderr=io.StringIO())
    about = Listing([], transport="http", filtered=False, joined=False)
    failure = ProtocolViolation("the server's answer is not valid JSON")
    with pytest.raises(ProtocolViolation, match="not valid JSON") as raised:
        ListView(screen).stream(
            failing_after(3, failure), about, sort_key=newest_first_key if newest else None
        )
    assert isinstance(screen.stdout, io.StringIO)
    assert screen.stdout.getvalue() == ""
    assert raised.value.message == "the server's answer is not valid JSON"


def test_a_failure_before_any_page_is_not_said_to_leave_a_list_incomplete() -> None:
    screen = Screen("jsonl", stdout=io.StringIO(), stderr=io.StringIO())
    about = Listing([], transport="http", filtered=False, joined=False)
    with pytest.raises(UnreachableError) as raised:
        ListView(screen).stream(failing_after(0, UnreachableError("refused")), about, sort_key=None)
    assert raised.value.message == "refused"


class GoneReader(io.StringIO):
    """A stdout whose reader goes away (`| head`) after the first write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError
        return super().write(text)

    def fileno(self) -> int:
        raise OSError("not a real file")


def test_a_reader_that_went_away_stops_the_listing() -> None:
    screen = Screen("ids", stdout=GoneReader(), stderr=io.StringIO())
    about = Listing([], transport="http", filtered=False, joined=False)
    asked: list[int] = []

    def pages() -> Iterator[list[Task]]:
        for number in range(100):
            asked.append(number)
            yield [make(f"t{number}")]

    ListView(screen).stream(pages(), about, sort_key=None)
    assert asked == [0, 1]  # no page is asked for once nobody reads


# -- the pages a listing asks for ------------------------------------------------------------------


class PagedClient:
    """The one method `task_pages` uses, counting the pages it was asked for."""

    def __init__(self, pages: list[list[Task]]) -> None:
        self.pages = pages
        self.asked = 0

    def iter_task_pages(self) -> Iterator[list[Task]]:
        for page in self.pages:
            self.asked += 1
            yield page


def test_a_limit_in_the_servers_order_asks_for_no_further_page() -> None:
    client = PagedClient([[make("a"), make("b")], [make("c"), make("d")], [make("e")]])
    pages = list(task_pages(client, limit=3))  # type: ignore[arg-type]
    assert [[task.taskId for task in page] for page in pages] == [["a", "b"], ["c"]]
    assert client.asked == 2


def test_the_status_filter_applies_before_the_limit() -> None:
    done = Task("x", "completed")
    client = PagedClient([[done, make("a")], [done, done], [make("b"), make("c")]])
    pages = task_pages(client, statuses=("working",), limit=2)  # type: ignore[arg-type]
    assert [task.taskId for page in pages for task in page] == ["a", "b"]
