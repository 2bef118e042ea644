"""Reading import files: CSV or NDJSON, streamed row by row, validated without raising.

CSV: a header row naming ``external_id`` (required) and any of ``email``, ``phone``,
``timezone``, ``locale``, ``tags`` (names separated by ``|``), ``attributes`` (a JSON
object) and ``attributes.<key>`` (one string attribute per column). Empty cells mean
"leave as is". NDJSON: one object per line with the same keys; ``tags`` is a list and
``attributes`` an object. Files are UTF-8 (a BOM is accepted).
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from apps.subscribers.validation import (
    email_problem,
    locale_problem,
    phone_problem,
    tag_count_problem,
    tag_problem,
    timezone_problem,
)

REQUIRED_COLUMNS = ("external_id",)
KNOWN_COLUMNS = ("external_id", "email", "phone", "timezone", "locale", "tags", "attributes")
ATTRIBUTE_PREFIX = "attributes."
CSV_TAG_SEPARATOR = "|"
# Joins tag names inside the COPY stream; a control character can never be in a tag name.
TAG_JOIN = "\x1f"
SNIFF_BYTES = 64 * 1024


class ImportFileError(ValueError):
    """The file as a whole cannot be read: wrong encoding, missing columns, not CSV."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(slots=True)
class ParsedRow:
    line: int
    external_id: str
    email: str | None
    phone: str | None
    timezone: str | None
    locale: str | None
    attributes: str | None  # JSON text, ready for COPY
    tags: list[str]


def row_failure(exc: BaseException, limit: int = 300) -> str:
    """The error of a row that raised instead of failing validation: class and message."""
    text = f"The row could not be read: {type(exc).__name__}: {exc}".strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_header(columns: list[str]) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ImportFileError(
            f"The header has no {', '.join(missing)} column (found: {', '.join(columns) or 'nothing'}).",
            "missing_columns",
        )
    unknown = [c for c in columns if c not in KNOWN_COLUMNS and not c.startswith(ATTRIBUTE_PREFIX)]
    if unknown:
        raise ImportFileError(
            f"Unknown column {unknown[0]!r}; use attributes.<name> for custom attributes.", "unknown_columns"
        )
    if len(set(columns)) != len(columns):
        raise ImportFileError("A column is named twice in the header.", "duplicate_columns")


def sniff(head: bytes, fmt: str) -> None:
    """Refuse a file early from its first bytes: encoding, and the CSV header."""
    if not head.strip():
        raise ImportFileError("The file is empty.", "empty_import")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ImportFileError("The file is UTF-16; save it as UTF-8.", "invalid_encoding")
    cut = head if len(head) < SNIFF_BYTES else head[: head.rfind(b"\n") + 1] or head
    if cut.startswith(codecs.BOM_UTF8):
        cut = cut[len(codecs.BOM_UTF8) :]
    # The first line with non-ASCII bytes decides: valid UTF-8 there means a UTF-8 file
    # (a later bad line is one bad row); invalid means the file was saved in another
    # encoding (typically Latin-1 / Windows-1252) and every accented row would be lost.
    lines = cut.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if raw.isascii():
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ImportFileError(
                f"The file is not UTF-8 (line {number} is not); save it as UTF-8.", "invalid_encoding"
            ) from None
        break
    text = b"\n".join(line for line in lines).decode("utf-8", errors="replace")
    if "\x00" in text:
        raise ImportFileError("The file contains NUL bytes: it is not a text file.", "invalid_encoding")
    if fmt == "csv":
        header = next(csv.reader(io.StringIO(text)), [])
        check_header([c.strip() for c in header])


def _text(value: Any, field: str, errors: list[str]) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        errors.append(f"{field} must be a string.")
        return None
    return value.strip()


def validate_row(line: int, data: dict[str, Any], tags: Any, attributes: Any) -> ParsedRow | str:
    """A ParsedRow, or the sentence explaining why this row is skipped."""
    errors: list[str] = []
    external_id = data.get("external_id")
    if isinstance(external_id, int) and not isinstance(external_id, bool):
        external_id = str(external_id)
    if not isinstance(external_id, str) or not external_id.strip():
        return "external_id is missing."
    external_id = external_id.strip()
    if len(external_id) > 255:
        return "external_id is longer than 255 characters."
    email = _text(data.get("email"), "email", errors)
    phone = _text(data.get("phone"), "phone", errors)
    tz = _text(data.get("timezone"), "timezone", errors)
    locale = _text(data.get("locale"), "locale", errors)
    for problem in (
        email and email_problem(email),
        phone and phone_problem(phone),
        tz and timezone_problem(tz),
        locale and locale_problem(locale),
    ):
        if problem:
            errors.append(problem)
    if not isinstance(tags, list):
        errors.append("tags must be a list.")
        tags = []
    for name in tags:
        problem = tag_problem(name)
        if problem:
            errors.append(problem)
    if problem := tag_count_problem(len(tags)):
        errors.append(problem)
    attrs_json = _attributes_json(attributes, errors)
    if errors:
        return " ".join(errors)
    return ParsedRow(line, external_id, email, phone, tz, locale, attrs_json, list(dict.fromkeys(tags)))


def read_csv(stream: IO[bytes], start_after_line: int = 0) -> Iterator[ParsedRow | tuple[int, str]]:
    """Yield ParsedRow or (line, error) for every data row after ``start_after_line``."""
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.reader(text)
    try:
        header = [c.strip() for c in next(reader)]
    except StopIteration:
        raise ImportFileError("The file is empty.", "empty_import") from None
    except csv.Error as exc:
        raise ImportFileError(f"The header is not CSV: {exc}.", "malformed_csv") from None
    check_header(header)
    check = _CsvRowCheck(header)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield reader.line_num, f"Malformed CSV: {exc}."
            continue
        line = reader.line_num
        if line <= start_after_line or not row:
            continue
        try:
            result = check(line, row)
        except Exception as exc:  # noqa: BLE001 - one row's surprise is that row's error
            result = row_failure(exc)
        yield (line, result) if isinstance(result, str) else result


class _CsvRowCheck:
    """validate_row for CSV, shaped for a million rows: cells are always strings, and the
    timezones, locales and tag cells of an import repeat, so each distinct value is
    checked once (caches bounded, for files where they do not repeat)."""

    CACHE_SIZE = 10_000

    def __init__(self, header: list[str]) -> None:
        index = {c: i for i, c in enumerate(header)}
        self.width = len(header)
        self.external_id_at = index["external_id"]
        self.email_at, self.phone_at = index.get("email"), index.get("phone")
        self.timezone_at, self.locale_at = index.get("timezone"), index.get("locale")
        self.tags_at, self.attrs_at = index.get("tags"), index.get("attributes")
        self.attr_cols = [
            (i, c[len(ATTRIBUTE_PREFIX) :]) for i, c in enumerate(header) if c.startswith(ATTRIBUTE_PREFIX)
        ]
        self.timezones: dict[str, str | None] = {}
        self.locales: dict[str, str | None] = {}
        # Raw tags cell -> (names, problems). The name lists are shared between rows and
        # never mutated (a merge of duplicate rows builds a new list).
        self.tag_cells: dict[str, tuple[list[str], list[str]]] = {}

    def __call__(self, line: int, row: list[str]) -> ParsedRow | str:
        try:
            "".join(row).encode("utf-8")
        except UnicodeEncodeError:
            return "The line is not valid UTF-8."
        if len(row) != self.width:
            return f"Expected {self.width} columns, found {len(row)}."
        attributes: Any = {}
        if self.attrs_at is not None and row[self.attrs_at].strip():
            try:
                attributes = json.loads(row[self.attrs_at])
            except ValueError:
                return "attributes is not valid JSON."
        for i, name in self.attr_cols:
            if row[i] != "" and isinstance(attributes, dict):
                attributes[name] = row[i]
        external_id = row[self.external_id_at].strip()
        if not external_id:
            return "external_id is missing."
        if len(external_id) > 255:
            return "external_id is longer than 255 characters."
        errors: list[str] = []
        email = _cell(row, self.email_at)
        if email and (problem := email_problem(email)):
            errors.append(problem)
        phone = _cell(row, self.phone_at)
        if phone and (problem := phone_problem(phone)):
            errors.append(problem)
        tz = _cell(row, self.timezone_at)
        if tz and (problem := _cached(self.timezones, tz, timezone_problem)):
            errors.append(problem)
        locale = _cell(row, self.locale_at)
        if locale and (problem := _cached(self.locales, locale, locale_problem)):
            errors.append(problem)
        tags: list[str] = []
        if self.tags_at is not None:
            cell = row[self.tags_at]
            known = self.tag_cells.get(cell)
            if known is None:
                names = [t.strip() for t in cell.split(CSV_TAG_SEPARATOR) if t.strip()]
                problems = [p for n in names if (p := tag_problem(n))]
                if problem := tag_count_problem(len(names)):
                    problems.append(problem)
                known = (list(dict.fromkeys(names)), problems)
                if len(self.tag_cells) >= self.CACHE_SIZE:
                    self.tag_cells.clear()
                self.tag_cells[cell] = known
            tags, problems = known
            errors += problems
        attrs_json = _attributes_json(attributes, errors)
        if errors:
            return " ".join(errors)
        return ParsedRow(line, external_id, email, phone, tz, locale, attrs_json, tags)


def _attributes_json(attributes: Any, errors: list[str]) -> str | None:
    """Compact JSON of a row's attributes; a non-object is reported in ``errors``."""
    if not attributes:
        return None
    if not isinstance(attributes, dict):
        errors.append("attributes must be an object.")
        return None
    return json.dumps(attributes, ensure_ascii=False, separators=(",", ":"))


def _cell(row: list[str], at: int | None) -> str | None:
    if at is None or row[at] == "":
        return None
    return row[at].strip()


def _cached(cache: dict[str, str | None], value: str, check: Any) -> str | None:
    if value in cache:
        return cache[value]
    if len(cache) >= _CsvRowCheck.CACHE_SIZE:
        cache.clear()
    cache[value] = problem = check(value)
    return problem


def read_ndjson(stream: IO[bytes], start_after_line: int = 0) -> Iterator[ParsedRow | tuple[int, str]]:
    for line, raw in enumerate(stream, start=1):
        if line <= start_after_line or not raw.strip():
            continue
        try:
            data = json.loads(raw.decode("utf-8-sig" if line == 1 else "utf-8"))
        except UnicodeDecodeError:
            yield line, "The line is not valid UTF-8."
            continue
        except ValueError as exc:
            yield line, f"Not valid JSON: {exc}."
            continue
        except Exception as exc:  # noqa: BLE001 - e.g. RecursionError on absurd nesting
            yield line, row_failure(exc)
            continue
        if not isinstance(data, dict):
            yield line, "Each line must be a JSON object."
            continue
        try:
            result = validate_row(line, data, data.get("tags") or [], data.get("attributes"))
        except Exception as exc:  # noqa: BLE001 - one row's surprise is that row's error
            result = row_failure(exc)
        yield (line, result) if isinstance(result, str) else result


def count_lines(stream: IO[bytes]) -> int:
    count, last = 0, b"\n"
    while chunk := stream.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)
