"""`list` prints exactly the documented rendering of the tasks it is given.

The reference is the rendering the README documents, written with `json.dumps` (the
document indented by 2; one compact object per line; one id per line): what `ListView`
prints must be byte for byte the same, in both orders, for every format that is not a
table, however the tasks are cut into pages and writes, and for `--known`'s whole list
(`show`, with the ids that are gone). Then what happens when a page fails half way, and
when the reader of stdout goes away.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptask.errors import ProtocolViolation, UnreachableError
from mcptask.operations.listing import newest_first_key, task_pages
from mcptask.output.sanitize import clean, safe_word
from mcptask.output.screen import Screen
from mcptask.output.views import tasks as task_views
from mcptask.output.views.tasks import Listing, ListView
from mcptask.protocol.tasks import Task
from tests.conftest import examples

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


def whole_list_output(output: str, shown: list[Task], gone: list[str] | None = None) -> str:
    """What `list -o OUTPUT` prints for these tasks, as the README documents it."""
    wire = [task.to_wire() for task in shown]
    if output == "json":
        document: dict[str, object] = {"tasks": wire, "count": len(wire)}
        if gone is not None:
            document["gone"] = gone
        return json.dumps(document, indent=2) + "\n"
    if output == "jsonl":
        return "".join(json.dumps(task, separators=(",", ":")) + "\n" for task in wire)
    # -o ids leaves out the ids that are not safe as shell words (a warning says so).
    ids = [clean(task.taskId) for task in shown]
    return "".join(task_id + "\n" for task_id in ids if safe_word(task_id))


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


# -- the order ---------------------------------------------------------------------------------


@settings(max_examples=examples(300))
@given(st.lists(tasks(), max_size=30))
def test_the_newest_first_key_orders_as_the_datetimes_did(items: list[Task]) -> None:
    by_key = sorted(items, key=newest_first_key, reverse=True)
    assert [id(task) for task in by_key] == [id(task) for task in old_newest_first(items)]


# -- streamed output is the whole-list output ------------------------------------------------------


@settings(deadline=None)
@given(
    items=st.lists(tasks(), max_size=25),
    sizes=st.lists(st.integers(0, 7), max_size=6),
    output=st.sampled_from(FORMATS),
    limit=st.none() | st.integers(1, 30),
)
def test_newest_first_streams_exactly_what_the_whole_list_prints(
    items: list[Task], sizes: list[int], output: str, limit: int | None
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(task_views, "WRITE_TASKS", 3)
        streamed, _ = streamed_output(output, cut(items, sizes), newest=True, limit=limit)
    assert streamed == whole_list_output(output, old_newest_first(items)[:limit])


@settings(deadline=None)
@given(
    items=st.lists(tasks(), max_size=25),
    sizes=st.lists(st.integers(0, 7), max_size=6),
    output=st.sampled_from(FORMATS),
)
def test_the_servers_order_streams_exactly_what_the_whole_list_prints(
    items: list[Task], sizes: list[int], output: str
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(task_views, "WRITE_TASKS", 3)
        streamed, _ = streamed_output(output, cut(items, sizes), newest=False)
    assert streamed == whole_list_output(output, items)


@settings(max_examples=examples(100), deadline=None)
@given(
    items=st.lists(tasks(), max_size=10),
    gone=st.none() | st.lists(texts, max_size=3),
    output=st.sampled_from(FORMATS),
)
def test_a_whole_list_shows_what_the_readme_documents(
    items: list[Task], gone: list[str] | None, output: str
) -> None:
    """`--known`: the refreshed tasks as they are, and the document names the gone ids."""
    screen = Screen(output, stdout=io.StringIO(), stderr=io.StringIO())
    ListView(screen).show(Listing(items, transport="http", filtered=False, joined=False, gone=gone))
    assert isinstance(screen.stdout, io.StringIO)
    assert screen.stdout.getvalue() == whole_list_output(output, items, gone)


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
