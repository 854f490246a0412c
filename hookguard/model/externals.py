"""What well-known classes outside the checkout define, so that an error can still be a proof.

A base outside the checkout may define any name, so a method it defines could shadow the base's
caller or be what an override really overrides. For the few bases almost every class of a
framework derives from, the names are known: ``torch.nn.Module`` defines ``forward`` and
``state_dict``, not ``_prepare_page_table_tensor``. These sets are data, written out once from
``dir()`` of each class (torch 2.13, Python 3.11) and kept as they are: hookguard never imports
torch to read them. A name a later version adds only makes hookguard a little more cautious
where the set is used to prove (nothing is proven from a name's *presence*).
"""

from __future__ import annotations

_OBJECT = frozenset(dir(object))


_TORCH_NN_MODULE = _OBJECT | frozenset({
    "T_destination", "__annotations__", "__call__", "__dict__", "__getattr__", "__module__",
    "__setstate__", "__weakref__", "_apply", "_call_impl", "_compiled_call_impl",
    "_get_backward_hooks", "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict",
    "_maybe_warn_non_full_backward_hook", "_named_members",
    "_register_load_state_dict_pre_hook", "_register_state_dict_hook",
    "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward", "_version",
    "_wrapped_call_impl", "add_module", "apply", "bfloat16", "buffers", "call_super_init",
    "children", "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr",
    "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule",
    "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children",
    "named_modules", "named_parameters", "parameters", "register_backward_hook",
    "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook",
    "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook",
    "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "set_submodule",
    "share_memory", "state_dict", "to", "to_empty", "train", "type", "xpu", "zero_grad"
})

_UNITTEST_TESTCASE = _OBJECT | frozenset({
    "__call__", "__dict__", "__module__", "__weakref__", "_addExpectedFailure",
    "_addUnexpectedSuccess", "_baseAssertEqual", "_callCleanup", "_callSetUp", "_callTearDown",
    "_callTestMethod", "_deprecate", "_diffThreshold", "_formatMessage",
    "_getAssertEqualityFunc", "_truncateMessage", "addClassCleanup", "addCleanup",
    "addTypeEqualityFunc", "assertAlmostEqual", "assertAlmostEquals", "assertCountEqual",
    "assertDictContainsSubset", "assertDictEqual", "assertEqual", "assertEquals",
    "assertFalse", "assertGreater", "assertGreaterEqual", "assertIn", "assertIs",
    "assertIsInstance", "assertIsNone", "assertIsNot", "assertIsNotNone", "assertLess",
    "assertLessEqual", "assertListEqual", "assertLogs", "assertMultiLineEqual", "assertNoLogs",
    "assertNotAlmostEqual", "assertNotAlmostEquals", "assertNotEqual", "assertNotEquals",
    "assertNotIn", "assertNotIsInstance", "assertNotRegex", "assertNotRegexpMatches",
    "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertRegex",
    "assertRegexpMatches", "assertSequenceEqual", "assertSetEqual", "assertTrue",
    "assertTupleEqual", "assertWarns", "assertWarnsRegex", "assert_", "countTestCases",
    "debug", "defaultTestResult", "doClassCleanups", "doCleanups", "enterClassContext",
    "enterContext", "fail", "failIf", "failIfAlmostEqual", "failIfEqual", "failUnless",
    "failUnlessAlmostEqual", "failUnlessEqual", "failUnlessRaises", "failureException", "id",
    "longMessage", "maxDiff", "run", "setUp", "setUpClass", "shortDescription", "skipTest",
    "subTest", "tearDown", "tearDownClass"
})

_THREADING_THREAD = _OBJECT | frozenset({
    "__dict__", "__module__", "__weakref__", "_bootstrap", "_bootstrap_inner", "_delete",
    "_initialized", "_reset_internal_locks", "_set_ident", "_set_native_id",
    "_set_tstate_lock", "_stop", "_wait_for_tstate_lock", "daemon", "getName", "ident",
    "isDaemon", "is_alive", "join", "name", "native_id", "run", "setDaemon", "setName", "start"
})

_BASEEXCEPTION = _OBJECT | frozenset({
    "__cause__", "__context__", "__dict__", "__setstate__", "__suppress_context__",
    "__traceback__", "add_note", "args", "with_traceback"
})

_EXCEPTION = _OBJECT | frozenset({
    "__cause__", "__context__", "__dict__", "__setstate__", "__suppress_context__",
    "__traceback__", "add_note", "args", "with_traceback"
})



# Dotted names as the resolver spells them (after imports), mapped to what the class defines.
KNOWN_EXTERNALS: dict[str, frozenset[str]] = {
    "object": _OBJECT,
    "builtins.object": _OBJECT,
    "torch.nn.Module": _TORCH_NN_MODULE,
    "torch.nn.modules.module.Module": _TORCH_NN_MODULE,
    "unittest.TestCase": _UNITTEST_TESTCASE,
    "unittest.case.TestCase": _UNITTEST_TESTCASE,
    "threading.Thread": _THREADING_THREAD,
    "BaseException": _BASEEXCEPTION,
    "Exception": _EXCEPTION,
    "builtins.Exception": _EXCEPTION,
}


# Qt's bindings: generated from C++ classes whose methods are camelCase; none defines a name
# with a leading underscore (dunders aside).
_QT_PACKAGES = frozenset({"PyQt4", "PyQt5", "PyQt6", "PySide", "PySide2", "PySide6", "qtpy"})


def external_defines(external: str, name: str) -> bool | None:
    """Whether the class outside the checkout named ``external`` defines ``name``: True, False,
    or None when hookguard does not know that class."""
    known = KNOWN_EXTERNALS.get(external)
    if known is None and external.split(".", 1)[0] in _QT_PACKAGES and name.startswith("_") and (
            not name.endswith("__")):
        return False  # (picard's ``_create_checkbox_widget`` over a ``QWidget``: round 19)
    return None if known is None else name in known
