"""What the profiling split leaves uncertain, as problems to simulate on.

A plan may read only :class:`Profiling`: the profiling rows of the experiment's configurations (rewards on the
declared objectives and costs, every configuration on the same instances), the normalisation they fix, and how many
instances a run will replay (the evaluation split's count, not its rows). :func:`posterior_problem` draws one
problem the experiment could face: a two-stage bootstrap of whole instances (an instance keeps its row of every
configuration, so correlations between configurations and between rewards and costs stay), first ``n`` of the
``n`` profiling instances (the population the profiling split could have come from), then ``m`` of those (the
``m`` instances a run replays). Its means spread about the profiling means as the evaluation split's do,
``Var = sigma^2 (1/n + 1/m)``, and it is replayed like the logs (SPEC §4). Logs imported with ``--repeats
epochs`` hold several runs of a question, alike more often than two questions are, and the split keeps a
question's runs on one side: there the draw resamples questions, each with all its runs (a cluster bootstrap),
so that the runs of one question do not count as independent evidence. :func:`profiling_problem` replays the
profiling rows themselves (the plug-in problem).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cabench.data.dataset import Dataset, question_codes
from cabench.data.normalisation import Normalisation
from cabench.data.terms import COST_COLUMN
from cabench.problem import Problem, ReplaySampler
from cabench.streams import stream_keys

#: The repetition whose streams give a synthetic instance its profiling sample: beyond any experiment's repetitions.
PROFILING_REPETITION = 2**40


@dataclass(frozen=True, eq=False)
class Profiling:
    """The profiling rows of an experiment's arms: ``rewards`` ``[K, n, D]`` (normalised), ``costs`` ``[K, n]``
    (cost unit), the normalisation they fix, and ``population``, the instances a run replays (None: a synthetic
    instance's unbounded population). For epoch logs, ``questions`` gives each profiling instance's question
    (``0 .. q-1``) and ``population_questions`` the evaluation split's number of questions; None otherwise."""

    name: str
    arm_names: tuple[str, ...]
    arm_ids: np.ndarray
    rewards: np.ndarray
    costs: np.ndarray
    norm: Normalisation
    population: int | None
    questions: np.ndarray | None = None
    population_questions: int | None = None
    surrogate: bool = False  # the logs are surrogate (dataset.yaml): every output of the plan says so

    @property
    def instances(self) -> int:
        return int(self.rewards.shape[1])


def profiling_of(ds: Dataset, arms: np.ndarray) -> Profiling:
    """The profiling split of ``ds`` on the arms ``arms`` (positions); of the evaluation split only its size."""
    arms = np.asarray(arms, dtype=np.int64)
    rewards = np.stack([r[arms] for r in ds.rewards_prof], axis=-1)
    questions, evaluated = question_codes(ds.meta, ds.profiling_ids), question_codes(ds.meta, ds.evaluation_ids)
    population_questions = None if evaluated is None else int(evaluated.max()) + 1
    return Profiling(ds.name, tuple(ds.configs["config_id"].astype(str).to_numpy()[arms]), arms,
                     np.ascontiguousarray(rewards), np.ascontiguousarray(ds.prof[COST_COLUMN][arms]),
                     ds.norm.select(arms), len(ds.evaluation_ids), questions, population_questions,
                     bool(ds.meta.get("surrogate")))


def sampled_profiling(problem: Problem, instances: int, seed: int) -> Profiling:
    """A profiling sample of a synthetic instance: ``instances`` pulls of every arm from the streams of seed
    ``seed`` and repetition :data:`PROFILING_REPETITION` (no experiment replays them)."""
    k = problem.n_arms
    keys = np.repeat(stream_keys(seed, np.array([PROFILING_REPETITION]), problem.arm_ids).T, instances, axis=1)
    arms = np.repeat(np.arange(k)[:, None], instances, axis=1)
    counts = np.broadcast_to(np.arange(instances), (k, instances))
    rewards, costs = problem.sample(keys, arms, counts)
    return Profiling(problem.name, problem.arm_names, np.asarray(problem.arm_ids), np.ascontiguousarray(rewards),
                     np.ascontiguousarray(costs, dtype=float), problem.norm, None)


def extrapolation(profiling: Profiling) -> float:
    """How far the evaluation split lies beyond the profiling rows, in units of the draws' distance from them
    (simulation-extrapolation, SIMEX: Cook and Stefanski, 1994). Over the population's means, the profiling means
    carry a sampling variance ``sigma^2/n``, a draw's ``sigma^2 (2/n + 1/m)``, the evaluation split's ``sigma^2/m``;
    linear in that variance, the evaluation split lies ``(1 - n/m) / (1 + n/m)`` of the way from the profiling rows
    to the draws, on the other side. A synthetic instance (no ``m``: its draws carry ``2 sigma^2/n``, the instance 0)
    lies 1 beyond."""
    if profiling.population is None:
        return 1.0
    ratio = profiling.instances / profiling.population
    if profiling.questions is not None and profiling.population_questions:  # epoch logs: draws count questions
        ratio = (int(profiling.questions.max()) + 1) / profiling.population_questions
    return (1.0 - ratio) / (1.0 + ratio)


def bootstrap_instances(n: int, m: int | None, rng: np.random.Generator) -> np.ndarray:
    """Instance positions of one draw: ``n`` of ``n`` with replacement, then ``m`` of those (``None``: the ``n``)."""
    first = rng.integers(n, size=n)
    return first if m is None else first[rng.integers(n, size=m)]


def bootstrap_questions(questions: np.ndarray, m: int | None, rng: np.random.Generator) -> np.ndarray:
    """Instance positions of one draw of epoch logs: of the ``q`` questions (``questions``: each instance's, ``0 ..
    q-1``), ``q`` with replacement, then ``m`` of those (``None``: the ``q``), each with every one of its runs."""
    runs = np.argsort(questions, kind="stable")
    starts = np.searchsorted(questions[runs], np.arange(questions.max() + 2))
    chosen = bootstrap_instances(len(starts) - 1, m, rng)
    return np.concatenate([runs[starts[i]:starts[i + 1]] for i in chosen])


def replayed(profiling: Profiling, rows: np.ndarray) -> Problem:
    """The problem whose population is the profiling instances ``rows`` (positions, repeats allowed), replayed like
    the logs (SPEC §4): means, costs and every configuration's row of an instance together."""
    rewards = np.ascontiguousarray(profiling.rewards[:, rows])
    costs = np.ascontiguousarray(profiling.costs[:, rows])
    norm = profiling.norm
    return Problem(name=profiling.name, arm_names=profiling.arm_names, arm_ids=profiling.arm_ids,
                   mu=rewards.mean(axis=1), mu_cost=norm.online_cost(costs).mean(axis=1), norm=norm,
                   sampler=ReplaySampler(rewards, costs))


def profiling_problem(profiling: Profiling) -> Problem:
    """The profiling rows themselves as the population: the plug-in problem."""
    return replayed(profiling, np.arange(profiling.instances))


def posterior_problem(profiling: Profiling, seed: int, draw: int) -> Problem:
    """Draw ``draw`` of the problems the profiling split leaves possible (module docstring), seeded by
    ``(seed, draw)``."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, draw])))
    if profiling.questions is not None:
        return replayed(profiling, bootstrap_questions(profiling.questions, profiling.population_questions, rng))
    return replayed(profiling, bootstrap_instances(profiling.instances, profiling.population, rng))
