"""Tables say what they show: units per value, a caption (takeaway and setup), long ones fold."""

from __future__ import annotations

from html.parser import HTMLParser

from osbench._table import FOLD_AFTER, Table, first_sentence


def round_trips() -> Table:
    return Table(
        "Round trips",
        ["mechanism", "median", "x call", "work"],
        [["call", 19.3, 1.0, 5000], ["pipe", 1963.0, 101.7, 20_000], ["far", 48_123.0, 2493.4, None]],
        note="A pipe costs about 100 calls. Each round trip wakes the other side twice.",
        key="round_trips",
        units={"median": "ns", "x call": "x"},
        setup="quick run on 2 CPUs",
        seed=7,
    )


def test_raw_values_stay_raw_and_every_rendering_formats_them_alike() -> None:
    t = round_trips()
    d = t.to_dict()
    assert d["rows"][1] == ["pipe", 1963.0, 101.7, 20_000] and d["units"] == {"median": "ns", "x call": "x"}
    assert d["seed"] == 7 and d["setup"] == "quick run on 2 CPUs" and d["key"] == "round_trips"
    expected = ["1.96 us", "102x", "20,000"]
    for text in (t.to_text(), t.to_markdown(), t.to_html()):
        assert all(e in text for e in expected), text
        assert "1963" not in text and "101.7" not in text
        assert "unknown" in text  # None is a fact that could not be had, never 0


def test_the_caption_is_the_takeaway_and_the_setup() -> None:
    t = round_trips()
    assert t.takeaway == "A pipe costs about 100 calls."
    assert t.setup_line == "quick run on 2 CPUs; seed 7"
    md = t.to_markdown().splitlines()
    assert md[2] == "*A pipe costs about 100 calls.* Setup: quick run on 2 CPUs; seed 7."
    assert md[-1] == "Each round trip wakes the other side twice."  # the rest of the note after the table
    html = t.to_html(anchor="x-round_trips")
    assert '<section class="table" id="x-round_trips">' in html
    assert "<strong>A pipe costs about 100 calls.</strong> Setup: quick run on 2 CPUs; seed 7." in html
    assert "Setup: quick run on 2 CPUs; seed 7." in t.to_text()


def test_first_sentence() -> None:
    assert first_sentence("5000 is page 1 (lecture). 20000 is a fault.") == (
        "5000 is page 1 (lecture).",
        "20000 is a fault.",
    )
    assert first_sentence("One sentence only") == ("One sentence only", "")
    assert first_sentence("The 1.5 MiB fits. Then") == ("The 1.5 MiB fits.", "Then")


class Tables(HTMLParser):
    """The rows of each <table>, and whether it sits inside a <details>."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[bool, int]] = []
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "details":
            self.depth += 1
        elif tag == "table":
            self.tables.append((self.depth > 0, -1))  # the header row is counted below
        elif tag == "tr":
            folded, rows = self.tables[-1]
            self.tables[-1] = (folded, rows + 1)

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.depth -= 1


def test_a_long_table_folds_with_its_key_rows_in_view() -> None:
    rows = [[f"row {i}", i] for i in range(FOLD_AFTER + 5)]
    folded = Tables()
    folded.feed(Table("Long", ["name", "n"], rows, key_rows=[3, 7]).to_html())
    assert folded.tables == [(False, 2), (True, FOLD_AFTER + 5)]
    plain = Tables()
    plain.feed(Table("Short", ["name", "n"], rows[:FOLD_AFTER]).to_html())
    assert plain.tables == [(False, FOLD_AFTER)]
    html = Table("Long", ["name", "n"], rows, key_rows=[3, 7]).to_html()
    assert f"All {FOLD_AFTER + 5} rows" in html and "<td>row 3</td>" in html


def test_numbers_are_right_aligned_and_long_text_may_wrap() -> None:
    t = Table("T", ["what", "n"], [["a sentence long enough to wrap in a narrow page", 3], ["b", 4]])
    html = t.to_html()
    assert "<td class='prose'>a sentence" in html and "<td class='n'>3</td>" in html and "<th class='n'>n</th>" in html
    assert "<td>b</td>" in html
