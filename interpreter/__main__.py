"""`python -m interpreter` is the `ludus` command."""

from .cli import main

raise SystemExit(main())
