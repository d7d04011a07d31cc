"""Write ``my_evals.csv``: a practitioner's own evaluation log, in their own column names.

Synthetic and illustrative: 6 fictional models x 2 prompting styles on 400 questions, with accuracy, latency in
milliseconds and separate prompt (input) and completion (output) token counts. Deterministic (seed 7):
``python examples/practitioner/make_logs.py`` rewrites the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

#: model: (ability, milliseconds per output token, base latency in ms)
MODELS = {
    "cirrus-8b": (0.42, 6.0, 180.0),
    "cirrus-70b": (0.63, 14.0, 260.0),
    "boreal-mini": (0.55, 8.0, 220.0),
    "boreal-pro": (0.71, 22.0, 420.0),
    "atlas-small": (0.60, 9.0, 300.0),
    "atlas-large": (0.78, 30.0, 650.0),
}
#: prompting: (accuracy gain, mean output tokens, extra prompt tokens)
STYLES = {"direct": (0.0, 24, 0), "cot": (0.07, 210, 40)}
QUESTIONS = 400


def make(seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.0, QUESTIONS)
    prompt_len = rng.integers(90, 260, QUESTIONS)
    rows = []
    for model, (ability, per_token, base) in MODELS.items():
        for style, (gain, out_mean, extra) in STYLES.items():
            p = 1.0 / (1.0 + np.exp(-(np.log((ability + gain) / (1 - ability - gain)) - 0.9 * difficulty)))
            correct = (rng.random(QUESTIONS) < p).astype(int)
            output = np.maximum(1, rng.poisson(out_mean, QUESTIONS))
            latency = (base + per_token * output) * rng.lognormal(0.0, 0.25, QUESTIONS)
            for q in range(QUESTIONS):
                rows.append({"run": f"{model}/{style}", "model_name": model, "temp": 0.0, "max_tokens": 512,
                             "style": style, "question": f"q{q:04d}", "is_correct": correct[q],
                             "latency_ms": round(float(latency[q]), 1), "input_tokens": int(prompt_len[q] + extra),
                             "output_tokens": int(output[q]), "judge_notes": "ok"})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    make().to_csv(Path(__file__).with_name("my_evals.csv"), index=False, lineterminator="\n")
