"""A lean LALR(1) parser for Lark grammars whose tokens are words, punctuation and quotes.

Lark builds the LALR(1) tables from the grammar; this module runs them with a tight loop
and its own reducers, several times faster than Lark's own loop for this kind of language:

* Rules mean what they mean in Lark (``?rule`` passes a single child on, ``_rule`` is
  inlined into its parent, ``[item]`` gives None when missing, ``!rule`` keeps keywords),
  but an inlined rule builds a list, not a tree, and a rule that only passes its child on
  costs no call: the tables skip such unit rules where they can (see
  :meth:`LalrParser._skip_unit_rules`).
* The lexer is contextual and reads one token per regular-expression match. The grammar's
  ``%ignore`` terminals are skipped as part of that match (a grammar with a single
  ``%ignore`` terminal must let it take a whole run at once). A *leading* terminal, one
  announced by its first character (a quote, a slash), is taken as it is. Otherwise the
  longest run of word characters is read and becomes whichever terminal the parser accepts
  at that point: a keyword, else the first *word kind* whose regular expression it matches
  entirely, else a plain word (a name). So a keyword is a name wherever no keyword could
  stand, and ``10`` is a size where a size may stand and a name elsewhere. As with Lark's
  contextual lexer, "may stand" is what the LALR state lists, which can be more than what
  the grammar allows there when states share look-aheads. Punctuation is every other
  string literal of the grammar.

Brackets (``{``, ``[``, ``(``) may nest at most ``MAX_NESTING`` deep: what is built from
deeper text (nested groups, lists, values) could not be walked without running out of
stack, so the parser refuses it at the bracket that goes too deep.

Reducers get the values of the kept symbols: :class:`Token` tuples for terminals with a
value, plain strings for keywords kept by ``!rule``. Errors are :class:`ParseError` with
line, column, the offending text and, in words, what the parser would really accept there.

Why not Lark's public API (``Lark(grammar, parser="lalr", lexer="contextual")`` with a
Transformer): it reads these texts 4 to 7 times slower, measured (lark 1.3.1, CPython 3.11,
best of 3, parse stage only, after the header and number runs are blanked as
:func:`nczarr.syntax.cdl.parse_cdl` does) against this runner with its reducers, while Lark
only built its tree: 1M float constants with a suffix (``1.5f``, read token by token) 2.9 s
against 12.6 s (11.3 s with an inline Transformer); 200k strings 0.49 s against 3.3 s; 20k
variables with attributes 0.83 s against 4.9 s; the ten ``samples/cdl`` texts 0.09 s against
0.39 s; 1.5M plain integers (packed into runs, so a few tokens) 0.06 s against 0.09 s. Lark's
lexer also needs terminal priorities to read these grammars (a comment is not a path, a
number not a name) and cannot make a word whichever terminal the parser state accepts. So the
tables come from Lark's ``lark.parsers.lalr_analysis`` (its internals: ``lark<2`` is pinned)
and this module runs them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Generic, NamedTuple, TypeGuard, TypeVar

from lark import Lark
from lark.grammar import Rule, Terminal
from lark.lexer import PatternStr
from lark.parsers.lalr_analysis import Shift

from nczarr.errors import ParseError
from nczarr.syntax.limits import MAX_NESTING

END = "$END"
Built = TypeVar("Built")
_OPENING = frozenset("{[(")
_CLOSING = frozenset("}])")
# Groups of the token regular expression besides punctuation ("_") and terminals.
END_GROUP = "END_OF_TEXT"
STRAY_GROUP = "STRAY_CHARACTER"

# A compiled action: the next state (shift), or (size, reducer, rule name) to reduce. The
# reducer is a function of the symbols' values; None leaves the value of a rule's only symbol
# in place; an int i appends the value of symbol i to the list that is the first symbol's
# value (a left-recursive list grows). A goto is the next state, or a map from look-ahead to
# the state reached after the unit rules that reduce at once there (key None: no unit rule).
_Reducer = Callable[[Sequence[Any]], Any]
_Reduce = tuple[int, _Reducer | int | None, str]
_Action = int | _Reduce | dict[str | None, int]


class Lines:
    """Finds the line and column of an offset in a text."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] = []

    def position(self, offset: int) -> tuple[int, int]:
        """The line and column (both from 1) of ``offset``."""
        if not self._starts:  # built on first use
            self._starts = [0, *(m.end() for m in re.finditer("\n", self._text))]
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


class Token(NamedTuple):
    """A token that carries a value: its terminal name, its text, and where it starts."""

    type: str
    text: str
    offset: int
    lines: Lines

    @property
    def position(self) -> tuple[int, int]:
        """The line and column (both from 1) of the token."""
        return self.lines.position(self.offset)


class LalrParser(Generic[Built]):
    """Parses text with the LALR(1) tables of a Lark grammar (see the module docstring);
    ``Built`` is what the builder makes of the start rule."""

    def __init__(
        self,
        grammar: str,
        start: str,
        builder: object,
        word: str,
        word_kinds: Iterable[str] = (),
        leading: Iterable[tuple[str, str]] = (),
        describe: Mapping[str, str] | None = None,
        reserved: bool = False,
        names: Iterable[str] = (),
    ) -> None:
        """Compile ``grammar``; ``builder`` has a method per rule that builds its value.

        ``word`` names the terminal of plain words and ``word_kinds`` the terminals a word
        may also be; ``leading`` pairs a terminal with a regular expression for the first
        characters that announce it; ``describe`` says in words what a terminal is.
        ``reserved``: keywords and word kinds are what they are everywhere, never names
        (ncgen's lexer), instead of only where the parser accepts them; ``names``: keywords
        read as plain words all the same (ncgen: the type words of a format without the type).
        """
        lark = Lark(grammar, parser="lalr", start=start, maybe_placeholders=True)
        conf = lark.parse_interactive("").parser_state.parse_conf
        self._start: int = conf.start_state
        self._end: int = conf.end_state
        reducers = {id(rule): _reducer(rule, builder) for rule in lark.rules}
        # Plain str keys: Lark's are Token objects, whose == is written in Python.
        self._actions: dict[int, dict[str, _Action]] = {
            state: {
                str(symbol): target
                if action is Shift
                else (len(target.expansion), reducers[id(target)], str(target.origin.name))
                for symbol, (action, target) in table.items()
            }
            for state, table in conf.states.items()
        }
        self._skip_unit_rules()

        literals = {
            t.pattern.value: t.name for t in lark.terminals if isinstance(t.pattern, PatternStr)
        }
        word_regex = lark.get_terminal(word).pattern.to_regexp()
        is_word = re.compile(word_regex).fullmatch
        self.keywords = {text: name for text, name in literals.items() if is_word(text)}
        """The grammar's keywords, by their text."""
        self._punctuation = {t: name for t, name in literals.items() if t not in self.keywords}
        self._word = word
        kinds = [
            (name, re.compile(lark.get_terminal(name).pattern.to_regexp()).fullmatch)
            for name in word_kinds
        ]
        # What a word may be in each state: the keywords and the word kinds it accepts there
        # (reserved: all of them, in every state).
        plain_words = frozenset(names)
        self._state_keywords = {
            state: {
                text: name
                for text, name in self.keywords.items()
                if (reserved or name in table) and text not in plain_words
            }
            for state, table in self._actions.items()
        }
        self._state_kinds = {
            state: tuple((name, fits) for name, fits in kinds if reserved or name in table)
            for state, table in self._actions.items()
        }
        self._token = self._token_regex(lark, word_regex, leading)
        self._describe = {name: repr(text) for text, name in literals.items()}
        self._describe.update(describe or {})

    def _token_regex(
        self, lark: Lark, word_regex: str, leading: Iterable[tuple[str, str]]
    ) -> re.Pattern[str]:
        ignored = [lark.get_terminal(name).pattern.to_regexp() for name in lark.ignore_tokens]
        skip = f"(?:{ignored[0]})?+" if len(ignored) == 1 else f"(?:{'|'.join(ignored)})*+"
        marks = sorted(self._punctuation, key=len, reverse=True)
        if all(len(mark) == 1 for mark in marks):
            punctuation = f"[{''.join(map(re.escape, marks))}]"  # a class beats a choice
        else:
            punctuation = "|".join(map(re.escape, marks))
        alternatives = [f"(?P<_>{punctuation})", f"(?P<{self._word}>{word_regex})"]
        alternatives += [
            f"(?P<{name}>(?={first})(?:{lark.get_terminal(name).pattern.to_regexp()}))"
            for name, first in leading
        ]
        # Something always matches, so that finditer never skips text: the end (after the
        # last blanks and comments), or a character nothing else takes.
        alternatives += [f"(?P<{END_GROUP}>\\Z)", f"(?P<{STRAY_GROUP}>(?s:.))"]
        return re.compile(f"{skip}(?:{'|'.join(alternatives)})")

    def parse(self, text: str) -> Built:
        """The value the builder makes for the start rule."""
        # the loop runs per token: its locals are not narrowed (mypy), for speed
        actions: dict[int, dict[str, Any]] = self._actions
        state_keywords = self._state_keywords
        state_kinds = self._state_kinds
        punctuation = self._punctuation
        word = self._word
        make = tuple.__new__  # builds a Token without a Python-level __new__
        lines = Lines(text)
        stack = [self._start]
        values: list[Any] = []
        push_state = stack.append
        push_value = values.append
        state: Any = self._start
        state_actions = actions[state]
        depth = 0
        kind: Any
        term: Any
        for found in self._token.finditer(text):
            kind = found.lastgroup
            item = value = found.group(kind)
            if kind == word:  # the most frequent: keywords, names, numbers
                term = state_keywords[state].get(value)
                if term is None:
                    term = word
                    for name, fits in state_kinds[state]:
                        if fits(value):
                            term = name
                            break
                    item = make(Token, (term, value, found.start(kind), lines))
            elif kind == "_":
                term = punctuation[value]
                if value in _OPENING:
                    depth += 1
                    if depth > MAX_NESTING:
                        where = lines.position(found.start(kind))
                        raise ParseError(f"nested deeper than {MAX_NESTING} levels", *where, value)
                elif value in _CLOSING:
                    depth -= 1
            elif kind == END_GROUP:
                term = END
            elif kind == STRAY_GROUP:
                raise self._error(stack, None, value, lines.position(found.start(kind)))
            else:
                term = kind
                item = make(Token, (term, value, found.start(kind), lines))
            while True:
                action = state_actions.get(term)
                if type(action) is int:
                    push_state(action)
                    push_value(item)
                    state = action
                    state_actions = actions[state]
                    break
                if action is None:
                    if term == END and state == self._end:
                        return values[-1]
                    where = lines.position(found.start(kind))
                    raise self._error(stack, term, None if term == END else value, where)
                size, reducer, origin = action
                if reducer is None:
                    del stack[-1]
                elif type(reducer) is int:
                    values[-size].append(values[reducer - size])
                    del values[1 - size :]
                    del stack[-size:]
                elif size:
                    children = values[-size:]
                    del values[-size:]
                    del stack[-size:]
                    push_value(reducer(children))
                else:
                    push_value(reducer([]))
                state = actions[stack[-1]][origin]
                if type(state) is not int:
                    state = state.get(term, state[None])
                push_state(state)
                state_actions = actions[state]
        raise AssertionError("unreachable: the end of the text always returns or raises")

    def _skip_unit_rules(self) -> None:
        """Make shifts and gotos skip the unit rules that would reduce right after them.

        Reducing a rule whose value is its only symbol's (``?rule: a | b``) pops the state
        just pushed and does a goto from the state below. After a shift into a state that
        can do nothing else, that goto can be taken at once (a default reduction). After a
        goto, where the chain of unit rules ends depends only on the state below, the rule
        reduced and the look-ahead, so the goto becomes a map from look-ahead to that end.
        """
        actions: dict[int, dict[str, Any]] = self._actions
        gotos = {
            (state, symbol): target
            for state, table in actions.items()
            for symbol, target in table.items()
            if not symbol.isupper()
        }
        for state, table in actions.items():
            for symbol, target in table.items():
                if symbol.isupper() and type(target) is int:
                    only = set(actions[target].values())
                    if len(only) == 1 and _is_unit(action := only.pop()):
                        table[symbol] = gotos[state, action[2]]
        for (state, symbol), target in gotos.items():
            chain: dict[str | None, int] = {}
            for term in actions[target]:
                end = target
                while _is_unit(action := actions[end].get(term)):
                    end = gotos[state, action[2]]
                if end != target:
                    chain[term] = end
            if chain:
                chain[None] = target
                actions[state][symbol] = chain

    def accepts(self, stack: list[int]) -> set[str]:
        """The terminals that can really come next (LALR tables merge look-aheads)."""
        return {
            symbol
            for symbol in self._actions[stack[-1]]
            if symbol.isupper() and self._would_shift(list(stack), symbol)
        }

    def _would_shift(self, stack: list[int], terminal: str) -> bool:
        actions: dict[int, dict[str, Any]] = self._actions
        while True:
            action = actions[stack[-1]].get(terminal)
            if action is None:
                return False
            if type(action) is int:
                return True
            size, _, origin = action
            if size:
                del stack[-size:]
            goto = actions[stack[-1]][origin]
            if type(goto) is not int:
                goto = goto.get(terminal, goto[None])
            stack.append(goto)
            if terminal == END and goto == self._end:
                return True

    def _error(
        self, stack: list[int], term: str | None, text: str | None, where: tuple[int, int]
    ) -> ParseError:
        if term == END:
            found = "unexpected end of text"
        elif term is not None:
            found = f"unexpected {text!r}"
        elif text == '"':
            found = "unterminated string"
        else:
            found = f"unexpected character {text!r}"
        words = tuple(sorted(self._describe.get(name, name) for name in self.accepts(stack)))
        expected = words[0] if len(words) == 1 else "one of " + ", ".join(words)
        return ParseError(f"{found}; expected {expected}", *where, text, words)


def _is_unit(action: object) -> TypeGuard[_Reduce]:
    """Whether an action reduces a rule that passes its only symbol's value on."""
    return type(action) is tuple and action[1] is None and action[0] == 1


def _reducer(rule: Rule, builder: object) -> _Reducer | int | None:
    """What reducing ``rule`` does to the values of its symbols, as Lark would do it.

    The builder's method gets the kept values as a sequence (a tuple, mostly).
    """
    name = str(rule.origin.name)
    options = rule.options
    size = len(rule.expansion)
    # Lark's placeholders: how many Nones stand before each symbol and after the last one.
    flags = "".join("1" if empty else "0" for empty in options.empty_indices)
    nones = [len(run) for run in flags.split("0")] if flags else [0] * (size + 1)
    steps: list[tuple[int, bool]] = []  # (index, splice); index `size` stands for a None
    for index, symbol in enumerate(rule.expansion):
        steps += [(size, False)] * nones[index]
        if options.keep_all_tokens or not (isinstance(symbol, Terminal) and symbol.filter_out):
            # An inlined rule ("_rule", and Lark's "__rule_star_n") gives a list to splice.
            steps.append((index, not symbol.is_term and symbol.name.startswith("_")))
    steps += [(size, False)] * nones[size]
    splices = [splice for _, splice in steps]
    inline = name.startswith("_")
    if inline and splices == [True, False]:
        return steps[1][0]  # a left-recursive list grows
    keep = [index for index, _ in steps]
    if options.expand1 and not any(splices) and len(keep) == 1 and keep[0] < size:
        return None if size == 1 else itemgetter(keep[0])
    method: _Reducer | None = None
    if not inline:
        method = getattr(builder, rule.alias or name, None)
        if method is None:
            raise TypeError(f"{type(builder).__name__} has no method for the rule {name!r}")
    splice_last = bool(splices) and splices[-1]
    if any(splices[:-1]) or (splice_last and options.expand1):
        return _splicing_reducer(steps, options.expand1, method)
    gather = _gatherer([i for i, splice in steps if not splice], any(nones))
    if splice_last:  # some values, then a list to splice (an attribute's values)
        last = steps[-1][0]
        if method is None:
            return lambda children: [*gather(children), *children[last]]
        return lambda children: method((*gather(children), *children[last]))
    if method is None:
        return lambda children: list(gather(children))
    if keep == list(range(size)):
        return method
    return lambda children: method(gather(children))


def _gatherer(keep: list[int], padded: bool) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function that picks the values at ``keep`` into a tuple; index len(values) is None."""
    if not keep:
        return lambda children: ()
    getter: Callable[[Sequence[Any]], Any] = itemgetter(*keep)
    if len(keep) == 1:
        one = getter
        getter = lambda children: (one(children),)  # noqa: E731
    if padded:
        unpadded = getter
        getter = lambda children: unpadded([*children, None])  # noqa: E731
    return getter


def _splicing_reducer(
    steps: list[tuple[int, bool]], expand1: bool, method: _Reducer | None
) -> _Reducer:
    first, first_splices = steps[0]
    rest = steps[1:]

    def reduce(children: Sequence[Any]) -> Any:
        children = [*children, None]  # index len(children) stands for a placeholder
        # A left-recursive list (rule: rule item) reuses the list it grows.
        values = children[first] if first_splices else [children[first]]
        for index, splice in rest:
            if splice:
                values += children[index]
            else:
                values.append(children[index])
        if expand1 and len(values) == 1:
            return values[0]
        return values if method is None else method(values)

    return reduce
