"""Building a ruleset: from the merged, validated document to the definitions of a ``Ruleset``.

:class:`RulesetBuilder` makes the kinds, zones, globals, entities (``count``, ``zone``), tables
(range rows) and the signatures of functions, modifier points, procedures and actions, checking
every cross-reference; when they hold no error, :class:`RuleTexts` hands each rules text to the
compiler (:class:`interpreter.dsl.compiler.Compiler`). A warm load (from the load cache) builds
the same way as a cold one.
"""

from __future__ import annotations

from typing import Any

from .boardcheck import check_board
from .buildvalues import ValueChecks
from .diagnostics import Diagnostic, did_you_mean
from .dsl import types as T
from .dsl.compiler import Compiler
from .finder import Document
from .model import (
    MAX_LIST,
    PLAYER_KIND,
    RESERVED_FIELDS,
    UMPIRE,
    ActionDef,
    FieldDef,
    FunctionDef,
    GlobalDef,
    KindDef,
    PointDef,
    Procedure,
    ProcField,
    ReportDef,
    Ruleset,
    ZoneDef,
    type_default,
)
from .yamlsource import PathKey

NAMESPACE_SECTIONS = ("entities", "globals", "constants", "zones", "tables", "functions", "modifier_points")


class RulesetBuilder(ValueChecks):
    """Turns the validated document into model definitions, then has every rules text compiled."""

    def __init__(self, rs: Ruleset, doc: Document, diags: list[Diagnostic]) -> None:
        self.rs = rs
        self.doc = doc
        self.data = doc.data
        self.smap = doc.smap
        self.diags = diags
        self.compiler = Compiler(rs, diags)
        self.broken: set[str] = set()  # entities already reported (their kind is unknown)
        self.entry_of: dict[str, str] = {}  # each static entity -> the entry that made it ('count')
        # Procedures whose text is not at procedures/NAME/do (procedure-valued fields): where it is.
        self.text_paths: dict[str, PathKey] = {}

    def err(self, path: PathKey, message: str, hint: str = "", key: bool = False) -> None:
        self.diags.append(Diagnostic(self.smap.loc(path, key=key), message, hint))

    def section(self, name: str) -> dict[str, Any]:
        value = self.data.get(name) or {}
        return value if isinstance(value, dict) else {}

    def build(self) -> None:
        self.namespace()
        self.enums()
        self.kinds()
        self.zones()
        self.globals()
        self.entities()
        self.constants()
        self.tables()
        self.signatures()
        if self.diags:
            return
        RuleTexts(self).bodies()

    # ------------------------------------------------------------ structure
    def namespace(self) -> None:
        """Bare names in rules must be unambiguous: one id may name one thing."""
        owner: dict[str, tuple[str, str]] = {}
        for sec in NAMESPACE_SECTIONS:
            for eid in self.section(sec):
                if sec == "zones" and (self.section("zones")[eid] or {}).get("per"):
                    continue
                if eid in owner:
                    other_sec, _ = owner[eid]
                    self.err((sec, eid), f"duplicate id '{eid}': it also names one of the {other_sec}",
                             f"see {self.smap.loc((other_sec, eid), key=True)}; rename one", key=True)
                else:
                    owner[eid] = (sec, eid)
        for sec in ("entities", "globals"):
            for eid in self.section(sec):
                if eid in ("players", "player_count", "none", "true", "false", "actor"):
                    self.err((sec, eid), f"'{eid}' is a built-in name and cannot be an id", key=True)
        if self.rs.umpire:  # the name of the umpire seat (docs/umpire.md): one id may name one thing
            for sec in NAMESPACE_SECTIONS:
                if UMPIRE in self.section(sec):
                    self.err((sec, UMPIRE), f"'{UMPIRE}' names the umpire seat of this ruleset and cannot be an id",
                             "rename it, or leave out 'umpire: true' in ruleset.yaml", key=True)

    def enums(self) -> None:
        """Enumerations: named sets of texts, checked wherever a value of one is written."""
        kinds = set(self.section("kinds")) | {PLAYER_KIND}
        for name, spec in self.section("enums").items():
            if name in kinds or name in T.SCALARS or name in ("list", "zone", "entity"):
                self.err(("enums", name), f"'{name}' already names a type", "rename the enumeration", key=True)
                continue
            values = [str(v) for v in spec.get("values") or []]
            for i, v in enumerate(values):
                if v in values[:i]:
                    self.err(("enums", name, "values", i), f"'{v}' appears twice in enumeration '{name}'")
            self.rs.enums[name] = tuple(values)

    def type_of(self, path: PathKey, text: Any) -> T.Type:
        t = T.parse_type(str(text), set(self.section("kinds")) | {PLAYER_KIND}, self.rs.enums)
        if t is None:
            known = ["int", "bool", "str", "any", "list", "list of KIND", *self.section("kinds"), *self.rs.enums]
            self.err(path, f"unknown type '{text}'", did_you_mean(str(text), known) or
                     "use int, bool, str, any, a kind name, or 'list of ...'")
            return T.ANY
        return t

    def kinds(self) -> None:
        rs = self.rs
        kinds = dict(self.section("kinds"))
        kinds.setdefault(PLAYER_KIND, {"fields": {}})
        for name, spec in kinds.items():
            spec = spec or {}
            kd = KindDef(name, label=spec.get("label"), source=str(spec.get("source", "")))
            rs.kinds[name] = kd
        for name, spec in kinds.items():
            spec = spec or {}
            kd = rs.kinds[name]
            for fname, fspec in (spec.get("fields") or {}).items():
                path = ("kinds", name, "fields", fname)
                if fname in RESERVED_FIELDS:
                    self.err(path, f"'{fname}' is a built-in field of every entity", "choose another name", key=True)
                    continue
                if isinstance(fspec, dict) and fspec.get("type") == "procedure":
                    kd.procs[fname] = ProcField(fname, self.params(path + ("params",), fspec.get("params")),
                                                f"{name}.{fname}" if "default" in fspec else None)
                    continue
                if isinstance(fspec, dict) and "params" in fspec:
                    self.err(path + ("params",), "only a field of type 'procedure' takes params", key=True)
                if isinstance(fspec, dict):
                    ftype = self.type_of(path + ("type",), fspec.get("type", "any"))
                    default = fspec.get("default")
                else:
                    ftype = self.type_of(path, fspec)
                    default = None
                if default is not None:
                    self.check_value(path + ("default",), ftype, default)
                kd.fields[fname] = FieldDef(fname, ftype, default)
            if kd.label and kd.label not in kd.fields:
                self.err(("kinds", name, "label"), f"label field '{kd.label}' is not a field of {name}",
                         did_you_mean(kd.label, kd.fields))

    def zones(self) -> None:
        rs = self.rs
        for name, spec in self.section("zones").items():
            spec = spec or {}
            per = spec.get("per")
            holds = spec.get("holds", "*")
            for key, val in (("per", per), ("holds", holds)):
                if val not in (None, "*") and val not in rs.kinds:
                    self.err(("zones", name, key), f"unknown kind '{val}'", did_you_mean(str(val), rs.kinds))
            vis = spec.get("visibility", "public")
            if "visible_to" in spec and per is None:
                self.err(("zones", name, "visible_to"), "only a zone 'per: KIND' can be visible to some players",
                         "give the zone a 'per:' kind, or give 'visible_to' to the kind of what it holds", key=True)
            if vis == "owner" and per != PLAYER_KIND:
                self.err(("zones", name, "visibility"), "only zones 'per: player' can be visible to their owner",
                         "use public or hidden")
            z = ZoneDef(name, per, vis,
                        holds if holds in rs.kinds else "*", str(spec.get("source", "")))
            rs.zones[name] = z
            if per in rs.kinds:
                kd = rs.kinds[per]
                if name in kd.fields:
                    self.err(("zones", name), f"zone '{name}' has the name of a field of {per}", key=True)
                kd.zones[name] = z

    def globals(self) -> None:
        for name, spec in self.section("globals").items():
            path = ("globals", name)
            gtype = self.type_of(path + ("type",), spec.get("type", "any"))
            initial = spec.get("initial")
            if initial is not None:
                self.check_value(path + ("initial",), gtype, initial)
            else:
                initial = type_default(gtype)
            self.rs.globals[name] = GlobalDef(name, gtype, initial)

    def entities(self) -> None:
        rs = self.rs
        specs = self.section("entities")
        # first pass: ids and kinds, so references between entities resolve in any order
        expanded: list[tuple[str, str, dict[str, Any]]] = []
        for eid, spec in specs.items():
            path = ("entities", eid)
            kind = spec.get("kind")
            if kind not in rs.kinds:
                self.err(path + ("kind",), f"unknown kind '{kind}'", did_you_mean(str(kind), rs.kinds))
                self.broken.add(eid)  # known to exist: references to it are not errors too
                continue
            if kind == PLAYER_KIND:
                self.err(path + ("kind",), "players are created by the engine, one per seat",
                         "give player fields defaults in kinds: player")
                continue
            count = spec.get("count")
            if len(expanded) + (1 if count is None else int(count)) > MAX_LIST:
                self.err(path + ("count",), f"more than {MAX_LIST:,} entities in all",
                         "a ruleset may define at most 100,000 entities")
                break
            ids = [eid] if count is None else [f"{eid}_{i}" for i in range(1, int(count) + 1)]
            for one in ids:
                if one in rs.entities:
                    self.err(path, f"duplicate id '{one}' (made by 'count')", key=True)
                rs.entities[one] = {"kind": kind}
                self.entry_of[one] = eid
                expanded.append((one, eid, spec))
        for one, eid, spec in expanded:
            path = ("entities", eid)
            kd = rs.kinds[spec["kind"]]
            rec = rs.entities[one]
            for key, value in spec.items():
                if key in ("kind", "count", "source", "note", "zone"):
                    continue
                if key in kd.procs:
                    if not isinstance(value, str):
                        self.err(path + (key,), f"'{key}' of a {kd.name} is a procedure: give it as rules text",
                                 f"write {key}: | followed by its statements")
                    continue  # compiled as the procedure '<entry>.<field>' (field_procedures)
                if key not in kd.fields:
                    self.err(path + (key,), f"{kd.name} has no field '{key}'",
                             did_you_mean(key, kd.fields) or f"declare it under kinds: {kd.name}: fields", key=True)
                    continue
                self.check_value(path + (key,), kd.fields[key].type, value)
                rec[key] = value
            if spec.get("zone") is not None:
                zkey = str(spec["zone"])
                if self.zone_key_ok(path + ("zone",), zkey, kd.name):
                    rec["zone"] = zkey

    def params(self, path: PathKey, spec: Any) -> dict[str, T.Type]:
        out: dict[str, T.Type] = {}
        for pname, ptype in (spec or {}).items():
            out[pname] = self.type_of(path + (pname,), ptype)
        return out

    def signatures(self) -> None:
        rs = self.rs
        for name, spec in self.section("functions").items():
            path = ("functions", name)
            rs.functions[name] = FunctionDef(name, self.params(path + ("params",), spec.get("params")),
                                             self.type_of(path + ("returns",), spec.get("returns", "any")),
                                             loc=self.smap.loc(path, key=True))
        for name, spec in self.section("modifier_points").items():
            path = ("modifier_points", name)
            rs.points[name] = PointDef(name, self.params(path + ("params",), spec.get("params")),
                                       self.type_of(path + ("type",), spec.get("type", "int")),
                                       loc=self.smap.loc(path, key=True))
        for name, spec in self.section("procedures").items():
            path = ("procedures", name)
            if ("do" in spec) == ("steps" in spec):
                self.err(path, f"procedure '{name}' needs either 'do' (its rules text) or 'steps' (named parts "
                         "of it)" + (", not both" if "do" in spec else ""), key=True)
            elif "steps" in spec and not spec["steps"]:
                self.err(path + ("steps",), f"procedure '{name}' has no steps", "give at least one, or use 'do'")
            rs.procedures[name] = Procedure(name, self.params(path + ("params",), spec.get("params")),
                                            loc=self.smap.loc(path, key=True))
        self.field_procedures()
        if "main" not in rs.procedures:
            _path, _manifest, msmap = self.doc.manifests[-1]  # at the list of files main should be in
            self.diags.append(Diagnostic(msmap.loc(("files",)), "the ruleset has no 'main' procedure",
                                         "add procedures: main: do: ..."))
        for name in ("setup", "main"):
            if name in rs.procedures and rs.procedures[name].params:
                self.err(("procedures", name, "params"), f"'{name}' cannot take parameters")
        for name, spec in self.section("actions").items():
            group = str(spec.get("group", "actions"))
            rs.groups.setdefault(group, []).append(name)
            rs.actions[name] = ActionDef(name, group, [], None,
                                         Procedure("action:" + name, {}, loc=self.smap.loc(("actions", name), key=True)),
                                         loc=self.smap.loc(("actions", name), key=True))


    def field_procedures(self) -> None:
        """Each entity's text in a procedure-valued field becomes the procedure '<entry>.<field>'
        (the copies a 'count' makes share it); an entity without one takes the field's default."""
        rs = self.rs
        for kd in rs.kinds.values():
            for pf in kd.procs.values():
                rs.field_procs.setdefault(pf.name, {})
                if pf.default is not None:
                    self._text_procedure(pf.default, pf.params, ("kinds", kd.name, "fields", pf.name, "default"))
        specs = self.section("entities")
        reported: set[str] = set()
        for one, eid in self.entry_of.items():
            kd = rs.kinds[rs.entities[one]["kind"]]
            for pf in kd.procs.values():
                if pf.name in specs[eid]:
                    name = f"{eid}.{pf.name}"
                    if name not in rs.procedures:
                        self._text_procedure(name, pf.params, ("entities", eid, pf.name))
                elif pf.default is not None:
                    name = pf.default
                else:
                    if eid not in reported:
                        reported.add(eid)
                        self.err(("entities", eid), f"{kd.name} '{eid}' has no '{pf.name}'",
                                 f"add '{pf.name}: |' and its statements to it, "
                                 f"or give the field a default under kinds: {kd.name}", key=True)
                    continue
                rs.field_procs[pf.name][one] = name

    def _text_procedure(self, name: str, params: dict[str, T.Type], path: PathKey) -> None:
        self.rs.procedures[name] = Procedure(name, dict(params), loc=self.smap.loc(path, key=True))
        self.text_paths[name] = path


class RuleTexts:
    """The rules texts of the document, each handed to the compiler with where it starts."""

    def __init__(self, b: RulesetBuilder) -> None:
        self.rs = b.rs
        self.data = b.data
        self.smap = b.smap
        self.err = b.err
        self.section = b.section
        self.compiler = b.compiler
        self.text_paths = b.text_paths

    def text(self, path: PathKey, statements: bool = False) -> tuple[str, Any]:
        """A rules-language text and where it starts (YAML true/false/numbers read as written).

        A folded block ('>') suits a long expression but not statements, whose line breaks matter.
        """
        raw = _get(self.data, path)
        origin = self.smap.text_at(path)
        if statements and origin is not None and origin.folded:
            self.err(path, "rules text cannot be a folded block ('>'): YAML would join its lines",
                     "write '|' instead of '>' to keep each statement on its own line")
            return "pass", origin  # compiling the joined lines would only add misleading errors
        text = ("true" if raw else "false") if isinstance(raw, bool) else ("none" if raw is None else str(raw))
        return text, origin if origin is not None else self.smap.text(path)

    def bodies(self) -> None:
        rs = self.rs
        c = self.compiler
        for name, fdef in rs.functions.items():
            text, origin = self.text(("functions", name, "expr"))
            c.function(fdef, text, origin)
        for name, pdef in rs.points.items():
            text, origin = self.text(("modifier_points", name, "base"))
            c.point(pdef, text, origin)
        procedures = self.section("procedures")
        for name, proc in rs.procedures.items():
            steps = (procedures.get(name) or {}).get("steps") if name not in self.text_paths else None
            if steps:
                parts = [self.text(("procedures", name, "steps", step), statements=True) for step in steps]
                c.procedure_steps(proc, parts, dict(proc.params))
                continue
            text, origin = self.text(self.text_paths.get(name, ("procedures", name, "do")), statements=True)
            c.procedure(proc, text, origin, dict(proc.params))
        player = T.ent(PLAYER_KIND)
        for name, action in rs.actions.items():
            spec = self.section("actions")[name]
            domains = [(pname, self.text(("actions", name, "params", pname))) for pname in spec.get("params") or {}]
            cond = self.text(("actions", name, "if")) if "if" in spec else None
            label = self.text(("actions", name, "label")) if "label" in spec else None
            c.action(action, domains, cond, label, self.text(("actions", name, "do"), statements=True))
        scoring = self.data.get("scoring") or {}
        scope = {"p": player}
        if "score" in scoring:
            text, origin = self.text(("scoring", "score"))
            rs.scoring.score, _ = c.expression(text, origin, scope, T.INT, "the score")
        for i, _tb in enumerate(scoring.get("tiebreaks") or []):
            text, origin = self.text(("scoring", "tiebreaks", i))
            fn, _ = c.expression(text, origin, scope, None)
            if fn is not None:
                rs.scoring.tiebreaks.append(fn)
        if "evaluation" in scoring:
            text, origin = self.text(("scoring", "evaluation"))
            rs.scoring.evaluation, _ = c.expression(text, origin, scope, T.INT, "the evaluation")
        if "rounds" in scoring:
            text, origin = self.text(("scoring", "rounds"))
            rs.scoring.rounds, _ = c.expression(text, origin, {}, T.INT, "the number of rounds")
        for mname in scoring.get("metrics") or {}:
            text, origin = self.text(("scoring", "metrics", mname))
            fn, _ = c.expression(text, origin, scope, T.INT, f"the metric '{mname}'")
            if fn is not None:
                rs.scoring.metrics[mname] = fn
        for name, spec in self.section("invariants").items():
            text, origin = self.text(("invariants", name, "check"))
            fn, _ = c.expression(text, origin, {}, T.BOOL, f"the invariant '{name}'")
            if fn is not None:
                rs.invariants[name] = (fn, str(spec.get("message", name)))
        for name, spec in self.section("status").items():
            text, origin = self.text(("status", name, "show"))
            fn, _ = c.expression(text, origin, {"me": player}, None, f"the status line '{name}'")
            if fn is not None:
                rs.status[name] = (str(spec.get("label", name.replace("_", " "))), fn)
        rs.setups = {name: str(spec.get("title", name)) for name, spec in self.section("setups").items()}
        self.fog(player)
        c.check_signals()
        rs.signals = set(c.signals)
        self.report(player)
        check_board(self)
        c.finish()

    def fog(self, player: T.Type) -> None:
        """Fog of war: each 'visible_to' of a kind or of a zone per entity, a condition of 'me'
        (the player looking) and 'it' (the entity, or the zone's owner)."""
        rs, c = self.rs, self.compiler
        for name, spec in self.section("kinds").items():
            if "visible_to" in (spec or {}) and name in rs.kinds:
                text, origin = self.text(("kinds", name, "visible_to"))
                rs.kinds[name].visible_to, _ = c.expression(text, origin, {"me": player, "it": T.ent(name)}, T.BOOL,
                                                            f"who sees a {name} ('visible_to')")
                rs.fog = True
        for name, spec in self.section("zones").items():
            z = rs.zones.get(name)
            if "visible_to" in (spec or {}) and z is not None and z.per in rs.kinds:
                text, origin = self.text(("zones", name, "visible_to"))
                z.visible_to, _ = c.expression(text, origin, {"me": player, "it": T.ent(z.per)}, T.BOOL,
                                               f"who sees the zone '{name}' ('visible_to')")
                rs.fog = True

    def report(self, player: T.Type) -> None:
        """The 'report:' entry: the signal that ends each section, and its title (a template)."""
        spec = self.data.get("report")
        if not isinstance(spec, dict):
            return
        every = str(spec.get("every", ""))
        if every not in self.rs.signals:
            self.err(("report", "every"), f"no rule signals '{every}', so no report would ever end",
                     did_you_mean(every, self.rs.signals) or f"add 'signal {every}' where a report ends")
        title = None
        if "title" in spec:
            text, origin = self.text(("report", "title"))
            title = self.compiler.template(text, origin, {"me": player, "number": T.INT})
        self.rs.report = ReportDef(every, title)


def _get(data: Any, path: PathKey) -> Any:
    for k in path:
        data = data[k]
    return data
