"""Every ``--help`` (issue 42, item 4): each option says what it is (its unit where it has one),
and each command ends with one example command line, which parses as that command."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator

import pytest

from hepfmt.cli import build_parser
from hepfmt.cli.arguments import Parser

Command = tuple[tuple[str, ...], argparse.ArgumentParser]


def commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[Command]:
    """Every parser, depth first, with the words that call it."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*words, name))


def is_leaf(parser: argparse.ArgumentParser) -> bool:
    return not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


ALL = list(commands(build_parser()))
LEAVES = [(words, p) for words, p in ALL if is_leaf(p)]


def _id(command: Command) -> str:
    return " ".join(command[0]) or "hepfmt"


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(words) for words, _ in LEAVES}
    assert {"convert", "measure", "pair", "bench overhead", "metadata time",
            "schema extract"} <= names
    assert len(LEAVES) >= 25


@pytest.mark.parametrize("command", ALL, ids=_id)
def test_every_option_has_a_help_text(command: Command) -> None:
    words, parser = command
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help != argparse.SUPPRESS and action.help.strip(), \
            f"hepfmt {' '.join(words)}: {name} has no help"


@pytest.mark.parametrize("command", LEAVES, ids=_id)
def test_every_command_ends_with_an_example_that_parses_as_itself(command: Command) -> None:
    words, parser = command
    assert parser.epilog and "example:" in parser.epilog, f"hepfmt {' '.join(words)}"
    argv = shlex.split(parser.epilog.split("example:", 1)[1])
    assert argv[0] == "hepfmt"
    assert tuple(argv[1:1 + len(words)]) == words
    build_parser().parse_args(argv[1:])  # exits (status 2) on an option it does not have


@pytest.mark.parametrize("command", ALL, ids=_id)
def test_every_parser_is_hepfmts(command: Command) -> None:
    """The class that suggests the closest command or option: every parser, nested too."""
    assert isinstance(command[1], Parser)


@pytest.mark.parametrize("command", LEAVES, ids=_id)
def test_the_example_is_one_line_of_help(command: Command, monkeypatch) -> None:
    """An example is copied whole: the help does not wrap it, at any width."""
    monkeypatch.setenv("COLUMNS", "60")
    parser = command[1]
    text = parser.format_help()
    examples = [line for line in text.splitlines() if line.startswith("example: hepfmt ")]
    assert examples == [parser.epilog], text


#: Options whose value has a unit, and the word their help names it by.
UNITS = {
    r"--timeout|--time-limit|--budget-s|--budget|--seconds|--pause-s": "seconds",
    r"--cluster-size|--events|--file-events|--rows-per-group": "events",
    r"--memory-cap": "8G",
}


@pytest.mark.parametrize("command", ALL, ids=_id)
def test_an_option_with_a_unit_names_it(command: Command) -> None:
    words, parser = command
    for action in parser._actions:
        for pattern, unit in UNITS.items():
            if any(re.fullmatch(pattern, s) for s in action.option_strings):
                assert unit in action.help, f"hepfmt {' '.join(words)}: {action.option_strings}"


def test_generate_says_what_each_option_is() -> None:
    """The options a new user met without a word of help."""
    (gen,) = [p for words, p in LEAVES if words == ("generate",)]
    helps = {a.dest: a.help for a in gen._actions}
    assert "process" in helps["process"]
    assert "events" in helps["events"]
    assert "seed" in helps["seed"]
