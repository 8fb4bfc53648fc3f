"""The parts of :class:`interpreter.runtime.Game`, one mixin class a module.

``base`` declares what every part may use (``GameBase``, with the public interface that
compiled rules call); ``machine`` runs the rules (frames, budgets, the end), ``board``
holds entities, zones and dice, ``choices`` the decisions, ``modifiers`` the modifier
points, ``views`` what a player sees and copies of a game, ``values`` how values are read
and labelled. ``interpreter.runtime`` puts them together.
"""
