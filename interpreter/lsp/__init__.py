"""`ludus lsp`: a language server for ruleset folders (needs the optional ``pygls``).

The modules, each with one job:

- :mod:`.rulesets` — which ruleset a file belongs to, and checking it with the real loader over
  the texts open in the editor (the one part that talks to the engine's loader);
- :mod:`.symbols` — the ids a checked ruleset defines, where, and what they are (hover,
  definition, references);
- :mod:`.complete` — completion inside rules text: ids, fields after ``x.``, builtins, keywords;
- :mod:`.convert` — the engine's located diagnostics as LSP ranges, and "did you mean" fixes;
- :mod:`.server` — the pygls server wiring them to the protocol.

Only :mod:`.server` imports pygls, and :mod:`.convert` the protocol's types (lsprotocol); the
others are plain Python over the engine's own data, so they can be tested and reused without them.
"""
