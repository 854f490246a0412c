"""``hookguard upgrade``: the checkout's overrides that upgrading a package breaks.

- :mod:`hookguard.upgrade.sources`: where a version comes from (wheel, sdist, directory, the
  environment, the download cache), read as bytes, never imported;
- :mod:`hookguard.upgrade.package`: a version's records, parsed lazily;
- :mod:`hookguard.upgrade.changes`: how the package's hooks changed;
- :mod:`hookguard.upgrade.shims`: what keeps a new call from failing an old override;
- :mod:`hookguard.upgrade.check`: the two models, the rules, the findings, and what is an error;
- :mod:`hookguard.upgrade.pins`: the pinned versions of a git tree's requirement and lock files;
- :mod:`hookguard.upgrade.dependencies`: ``check --base`` runs the check for each dependency
  the change moves;
- :mod:`hookguard.upgrade.environment`: ``audit --python``, the installed packages the
  checkout subclasses, read into the audit's model.

Nothing imports this package but :mod:`hookguard.commands.upgrade`,
:mod:`hookguard.commands.check`, and :mod:`hookguard.engine` (lazily, for ``--python``).
"""
