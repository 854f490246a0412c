"""File records as MessagePack: the one encoding records travel in, to the cache's files and from
the parser's worker processes back to the run.

Decoding only builds data (strings, numbers, tuples, the record dataclasses), whoever wrote the
bytes. A class's methods are encoded apart and decoded on their first read
(:class:`~hookguard.model.records.LazyMethods`): a run that reads few classes never decodes the
methods of the others, and writes the undecoded ones back as they came. So are a file's fields
that few runs read (its module-level imports, :class:`~hookguard.model.records.LazyTuple`). The
wire types are derived from the record dataclasses' fields (:func:`_wire`), so a field added to a
record needs no code here.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import msgspec

from hookguard.model.records import (
    ClassRecord,
    FileRecord,
    LazyMethods,
    LazyTuple,
    MethodRecord,
    UndecodableRecord,
)


def _wire(cls: type, name: str, overrides: dict[str, Any]) -> type[msgspec.Struct]:
    """A msgspec struct with ``cls``'s dataclass fields, in order, encoded as an array."""
    hints = typing.get_type_hints(cls)
    fields = [(f.name, overrides.get(f.name, hints[f.name])) for f in dataclasses.fields(cls)]
    return msgspec.defstruct(name, fields, array_like=True, gc=False, omit_defaults=False)


def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


_METHOD_FIELDS = _names(MethodRecord)
_CLASS_FIELDS = _names(ClassRecord)
_FILE_FIELDS = _names(FileRecord)
_METHODS_AT = _CLASS_FIELDS.index("methods")
_CLASSES_AT = _FILE_FIELDS.index("classes")
# A file's fields that few runs read, each encoded apart and decoded on first read (see
# :class:`~hookguard.model.records.LazyTuple`), with the decoder of its items.
_LAZY_FIELDS: dict[int, msgspec.msgpack.Decoder[Any]] = {
    _FILE_FIELDS.index("needed_modules"): msgspec.msgpack.Decoder(tuple[tuple[str, int], ...]),
    _FILE_FIELDS.index("needed_names"): msgspec.msgpack.Decoder(tuple[tuple[str, str, int], ...]),
}

_MethodWire = _wire(MethodRecord, "_MethodWire", {})
# A class's methods: their names, and the methods encoded apart, decoded on first read.
_ClassWire = _wire(ClassRecord, "_ClassWire", {"methods": tuple[tuple[str, ...], msgspec.Raw]})
FileWire = _wire(FileRecord, "FileWire", {
    "classes": list[_ClassWire],  # type: ignore[valid-type]
    **{_FILE_FIELDS[at]: msgspec.Raw for at in _LAZY_FIELDS},
})

_method_values: Callable[[MethodRecord], tuple[Any, ...]] = attrgetter(*_METHOD_FIELDS)
_class_values: Callable[[ClassRecord], tuple[Any, ...]] = attrgetter(*_CLASS_FIELDS)
_file_values: Callable[[FileRecord], tuple[Any, ...]] = attrgetter(*_FILE_FIELDS)
_astuple = msgspec.structs.astuple

ENCODER = msgspec.msgpack.Encoder()
_METHODS_DECODER = msgspec.msgpack.Decoder(list[_MethodWire])  # type: ignore[valid-type]
_FILE_DECODER = msgspec.msgpack.Decoder(FileWire)


def _decode_methods(raw: Any) -> list[MethodRecord]:
    try:
        return [MethodRecord(*_astuple(m)) for m in _METHODS_DECODER.decode(raw)]
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise UndecodableRecord(f"a cached method table does not decode ({exc})") from None


def _lazy_decoder(decoder: msgspec.msgpack.Decoder[Any]) -> Callable[[Any], Any]:
    def decode(raw: Any) -> Any:
        try:
            return decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise UndecodableRecord(f"a cached record field does not decode ({exc})") from None

    return decode


_LAZY_DECODE = {at: _lazy_decoder(decoder) for at, decoder in _LAZY_FIELDS.items()}


def to_wire(record: FileRecord) -> msgspec.Struct:
    """``record`` as its wire struct; methods still undecoded are taken as they are."""
    classes = []
    for klass in record.classes:
        values = list(_class_values(klass))
        methods = klass.methods
        raw = methods.encoded if isinstance(methods, LazyMethods) else None
        if raw is None:
            raw = ENCODER.encode([_MethodWire(*_method_values(m)) for m in methods.values()])
        values[_METHODS_AT] = (tuple(methods), msgspec.Raw(raw))
        classes.append(_ClassWire(*values))
    values = list(_file_values(record))
    values[_CLASSES_AT] = classes
    for at in _LAZY_FIELDS:
        value = values[at]
        raw = value.encoded if isinstance(value, LazyTuple) else None
        values[at] = msgspec.Raw(ENCODER.encode(tuple(value)) if raw is None else raw)
    return FileWire(*values)


def from_wire(wire: msgspec.Struct) -> FileRecord:
    """The record a wire struct holds, its classes' methods decoded on first read."""
    values = list(_astuple(wire))
    classes = []
    for klass in values[_CLASSES_AT]:
        class_values = list(_astuple(klass))
        names, raw = class_values[_METHODS_AT]
        class_values[_METHODS_AT] = LazyMethods(names, raw, _decode_methods)
        classes.append(ClassRecord(*class_values))
    values[_CLASSES_AT] = classes
    for at, decode in _LAZY_DECODE.items():
        values[at] = LazyTuple(values[at], decode)
    return FileRecord(*values)


def encode(record: FileRecord) -> bytes:
    return ENCODER.encode(to_wire(record))


def decode(data: bytes) -> FileRecord:
    """The record :func:`encode` wrote (raises ``msgspec.DecodeError`` on anything else)."""
    return from_wire(_FILE_DECODER.decode(data))


__all__ = ["ENCODER", "FileWire", "decode", "encode", "from_wire", "to_wire"]
