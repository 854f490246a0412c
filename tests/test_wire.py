"""Records on the wire (:mod:`hookguard.model.wire`): what the parser's workers send back and the
cache keeps is the record itself, whatever it holds, and decoding builds data only."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from hookguard.model import wire
from hookguard.model.extract import extract
from hookguard.model.records import FileRecord, LazyMethods, LazyTuple, UndecodableRecord
from hookguard.model.sources import module_names

ROOT = Path(__file__).resolve().parents[1]


def _records() -> list[FileRecord]:
    """Real records: every file of hookguard's own package and of the fixture checkouts."""
    paths = sorted(str(p.relative_to(ROOT)) for pattern in ("hookguard/**/*.py",
                                                            "fixtures/**/*.py")
                   for p in ROOT.glob(pattern))
    modules = module_names(paths)
    return [extract(path, *modules[path], (ROOT / path).read_bytes()) for path in paths]


def test_every_record_comes_back_equal() -> None:
    records = _records()
    assert sum(len(r.classes) for r in records) > 200  # methods, calls, params, members...
    for record in records:
        back = wire.decode(wire.encode(record))
        assert back == record, record.path
        assert [c.methods.keys() for c in back.classes] == [
            c.methods.keys() for c in record.classes]


def test_methods_are_decoded_on_first_read_and_written_back_as_they_came() -> None:
    record = next(r for r in _records() if r.path == "hookguard/model/records.py")
    back = wire.decode(wire.encode(record))
    at = next(n for n, c in enumerate(record.classes) if len(c.methods) > 2)
    lazy = back.classes[at].methods
    assert isinstance(lazy, LazyMethods) and lazy.encoded is not None
    assert list(lazy) == list(record.classes[at].methods)  # names without decoding
    assert lazy.encoded is not None
    again = wire.decode(wire.encode(back))  # written back from the undecoded bytes
    assert lazy.encoded is not None and again == record
    assert dict(lazy) == dict(record.classes[at].methods)
    assert lazy.encoded is None  # decoded now: one copy kept


def test_a_files_imports_are_decoded_on_first_read_and_written_back_as_they_came() -> None:
    record = extract("pkg/mod.py", "pkg.mod", False,
                     b"import os\nimport pkg.sub.leaf\nfrom pkg.other import thing, more\n"
                     b"try:\n    import optional\nexcept ImportError:\n    pass\n")
    assert list(record.needed_modules) == [("os", 1), ("pkg.sub.leaf", 2), ("pkg.other", 3)]
    assert list(record.needed_names) == [("pkg.other", "thing", 3), ("pkg.other", "more", 3)]
    back = wire.decode(wire.encode(record))
    lazy = back.needed_modules
    assert isinstance(lazy, LazyTuple) and lazy.encoded is not None
    again = wire.decode(wire.encode(back))  # written back from the undecoded bytes
    assert lazy.encoded is not None
    assert again == record and back == record  # (compared: decoded now)
    assert lazy.encoded is None and lazy[1] == ("pkg.sub.leaf", 2) and len(lazy) == 3
    assert back.needed_names == record.needed_names


def test_a_lazy_field_that_does_not_decode_is_an_undecodable_record() -> None:
    wire_record = wire.to_wire(FileRecord("a.py", "a", False))
    forged = msgspec.structs.replace(wire_record, needed_modules=msgspec.Raw(b"\x91\x92\x01\x02"))
    back = wire.from_wire(forged)  # the field is not read yet
    with pytest.raises(UndecodableRecord):
        list(back.needed_modules)


def test_an_error_record_keeps_its_error() -> None:
    record = extract("bad.py", "bad", False, b"def broken(:\n")
    back = wire.decode(wire.encode(record))
    assert back.error is not None and back.error == record.error
    assert back.error_line == record.error_line == 1


@pytest.mark.parametrize("data", [b"", b"\xc1", b"\x93\x01\x02\x03", wire.encode(
    FileRecord("a.py", "a", False))[:-1]])
def test_bytes_that_are_no_record_do_not_decode(data: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        wire.decode(data)
