"""The rules language: grammar, AST, parser and compiler."""
