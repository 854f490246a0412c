"""One module per CLI command (argument handling and output, no analysis), and
:mod:`hookguard.commands.common` for what they share with :mod:`hookguard.cli`."""
