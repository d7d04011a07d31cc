"""The one-line messages' shared pieces (:mod:`cabench.errors`)."""

from __future__ import annotations

from pathlib import Path

from cabench.errors import CabenchError, did_you_mean, first_three


def test_did_you_mean_names_the_closest_choice_as_the_message_shows_it_else_the_fallback():
    assert did_you_mean("acuracy", ["latency", "accuracy"]) == "; did you mean 'accuracy'?"
    assert did_you_mean("zzz", ["latency", "accuracy"], "; choices: both") == "; choices: both"
    assert did_you_mean("zzz", ["latency"]) == ""
    assert did_you_mean("gsm", ["gsm8k"], cutoff=0.9) == "" and did_you_mean("gsm", ["gsm8k"], cutoff=0.5) != ""
    assert did_you_mean("gsm8", ["gsm8k"], shown=lambda name: Path("data") / name) == "; did you mean 'data/gsm8k'?"
    assert did_you_mean("latncy", iter(["latency"])) == "; did you mean 'latency'?"  # any iterable of choices
    # a method by the name reports show (CoHV-UCB) points to the name a config takes, whatever the case
    assert did_you_mean("CoHV-UCB", ["hv-ucb", "cohv-ucb", "uniform"]) == "; did you mean 'cohv-ucb'?"
    assert did_you_mean("PSI-SR", iter(["copsi", "psi-sr"])) == "; did you mean 'psi-sr'?"


def test_first_three_and_one_line():
    assert first_three(["a", "b", "c"]) == "a, b, c" and first_three(["a", "b", "c", "d"]) == "a, b, c, ..."
    assert str(CabenchError("a\n  b")) == "a b"
