"""HG004 contract-stale."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from hookguard.findings import Finding, Severity
from hookguard.model.project import Project
from hookguard.rules.base import Rule, RuleContext
from hookguard.rules.contract_bypass import state_effects

if TYPE_CHECKING:
    from hookguard.contracts import HookContract


class ContractStale(Rule):
    """
    ## What it does
    Checks each contract in `contracts/*.toml` against the code: the class exists, it defines
    the hook, the names under `renamed_from` are really gone from it, and every declared field
    is assigned somewhere in the hook's implementation (the hook and the `self.` methods it
    calls).

    ## Why is this bad?
    A contract that names a renamed hook, or a field the hook no longer sets, checks nothing or
    the wrong thing: the runtime enforcement never wraps the hook, and the static rules stop
    recognising stale overrides of it.

    ## Example
    ```toml
    [[hook]]
    class = "pkg.manager.KVCacheManagerV2"
    method = "_build_pool_mapping_tensors"   # renamed to _prepare_page_table_tensor
    ```

    ## Use instead
    ```toml
    [[hook]]
    class = "pkg.manager.KVCacheManagerV2"
    method = "_prepare_page_table_tensor"
    renamed_from = ["_build_pool_mapping_tensors"]
    ```

    ## Known limitations
    During `audit`, contracts for classes outside the checkout are skipped (they describe a
    dependency); `hookguard contracts check` reports them.
    """

    code = "HG004"
    name = "contract-stale"
    severity = Severity.ERROR
    summary = "a contract names a class, hook or field the code no longer has"

    per_class = False  # about contracts, not classes: cheap, so always run whole

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        yield from check_contracts(self, ctx.project, ctx.contracts, strict=False)


def check_contracts(
    rule: Rule, project: Project, contracts: Sequence[HookContract], *, strict: bool
) -> Iterator[Finding]:
    for contract in contracts:
        info = project.classes.get(contract.cls)
        symbol = f"{contract.cls}.{contract.method}"
        if info is None:
            if strict:
                yield _finding(rule, contract, symbol, contract.line,
                               f"class {contract.cls} is not in the checkout")
            continue
        hook = info.method(contract.method)
        if hook is None:
            yield _finding(rule, contract, symbol, contract.line,
                           f"{info.name} has no method {contract.method}: the contract "
                           "names a hook that does not exist (renamed?)")
            continue
        for old in contract.renamed_from:
            if info.defines(old):
                yield _finding(rule, contract, symbol, contract.line,
                               f"renamed_from lists {old}, but {info.name} still defines it")
        effects = state_effects(project, info, hook)
        for spec, _ in contract.all_fields():
            if spec.name not in effects:
                yield _finding(rule, contract, f"{symbol}.{spec.name}", spec.line or contract.line,
                               f"field {spec.name} is never assigned by {info.name}."
                               f"{contract.method} or the methods it calls")


def _finding(rule: Rule, contract: HookContract, symbol: str, line: int, message: str) -> Finding:
    return Finding(
        rule=rule.name,
        code=rule.code,
        severity=rule.severity,
        path=contract.path,
        line=max(line, 1),
        column=1,
        symbol=symbol,
        hook=contract.method,
        message=message,
        evidence={"contract": contract.location, "class": contract.cls},
    )
