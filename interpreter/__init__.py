"""Ludus: a declarative, data-driven rules interpreter for historical board games.

Public API::

    from interpreter import load_ruleset, Game
    rs = load_ruleset("dice_race")
    game = Game.new(rs, players=3, seed=7)
    game.choices(game.deciders()[0])   # the labelled legal choices
    game.apply(0)                      # make one; illegal ones raise IllegalChoice
    game.view("red")                   # what a player may see
"""

from .diagnostics import Diagnostic, Loc, LudusError
from .loader import load_ruleset
from .runtime import Choice, Game, IllegalChoice

__version__ = "0.1.0"
__all__ = ["Choice", "Diagnostic", "Game", "IllegalChoice", "Loc", "LudusError", "load_ruleset", "__version__"]
