"""Hook state contracts: the TOML format, its reader and its validation.

Shared by the static rules and the torch runtime, so it imports neither torch nor libcst. A
contract file holds ``[[hook]]`` tables; each names the class that declares a hook, the hook's
method, the old names it replaced and the state the hook must leave on the object::

    [[hook]]
    class = "package.module.KVCacheManagerV2"
    method = "_prepare_page_table_tensor"
    renamed_from = ["_build_pool_mapping_tensors"]

    [hook.fields.kv_cache_pool_mapping]
    dtype = "int32"
    device = "cpu"
    pinned = true
    shape = ["num_local_layers", 2]

See ``docs/contracts.md`` for every key. :func:`load_contracts` reports unknown keys, bad values
and bad expressions as :class:`ContractError` with the file and line they come from.

One module per job: :mod:`~hookguard.contracts.schema` (the vocabulary and the parsed types),
:mod:`~hookguard.contracts.reader` (TOML to contracts, in linear time) and
:mod:`~hookguard.contracts.expressions` (the expression whitelist and its limits).
"""

from __future__ import annotations

from hookguard.contracts.expressions import (
    EXPR_ATTRIBUTES,
    EXPR_BUILTINS,
    ExpressionLimit,
    check_expression,
)
from hookguard.contracts.reader import load_contracts, parse_contracts
from hookguard.contracts.schema import (
    ADDRESS_SPACES,
    DEVICES,
    DTYPE_ALIASES,
    DTYPES,
    TYPES,
    VALUE_CHECKS,
    ContractError,
    Dim,
    FieldSpec,
    HookContract,
    WhenClause,
)

__all__ = [
    "ADDRESS_SPACES",
    "DEVICES",
    "DTYPES",
    "DTYPE_ALIASES",
    "EXPR_ATTRIBUTES",
    "EXPR_BUILTINS",
    "TYPES",
    "VALUE_CHECKS",
    "ContractError",
    "Dim",
    "ExpressionLimit",
    "FieldSpec",
    "HookContract",
    "WhenClause",
    "check_expression",
    "load_contracts",
    "parse_contracts",
]
