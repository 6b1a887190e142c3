"""Predicted output lengths for ``sjf`` and ``srpt`` (lecture section 2.6, and lecture 2's
length prediction): drawn once, here, and handed to either engine as one array, so that the
native engine and the reference see the same numbers.

- ``exact``: the true output length;
- ``noisy``: ``max(1, round(output_len * exp(sigma * z)))`` with ``z`` standard normal, drawn
  with ``numpy.random.default_rng(prediction_seed)`` in request order: the lecture's
  multiplicative lognormal error, median 1;
- ``bucketed``: the length's class, as length-prediction papers classify (equal-width classes
  of ``prediction_bucket`` tokens; the class ``(k*w, (k+1)*w]`` predicts its midpoint
  ``k*w + ceil(w/2)``);
- ``given``: the requests' own ``predicted_output_len`` column (a predictor run elsewhere).
"""

from __future__ import annotations

import numpy as np

from osbench.errors import ArgumentError
from osbench.serve.requests import Requests
from osbench.serve.vllm.config import PREDICTIONS, EngineConfig
from osbench.serve.vllm.policy import PREDICTED

__all__ = ["PREDICTIONS", "predicted_output_len"]


def predicted_output_len(requests: Requests, config: EngineConfig) -> np.ndarray:
    """The output length each request is predicted to have under ``config`` (int64, >= 0);
    the true lengths under a policy that reads no prediction."""
    out = requests.output_len
    model = config.prediction if config.policy in PREDICTED else "exact"
    if model == "given":
        if requests.predicted_output_len is None:
            raise ArgumentError(
                "requests is not accepted with prediction='given': it has no predicted_output_len "
                "(give Requests(..., predicted_output_len=...), or choose another prediction)"
            )
        return requests.predicted_output_len
    if model == "noisy":
        z = np.random.default_rng(config.prediction_seed).standard_normal(len(out))
        noisy = np.rint(out * np.exp(config.prediction_sigma * z))
        # Capped so that any error fits an int64; a prediction that large orders as infinite.
        return np.clip(noisy, 1, 2.0**62).astype(np.int64)
    if model == "bucketed":
        w = config.prediction_bucket
        return ((out - 1) // w) * w + (w + 1) // 2
    assert model in PREDICTIONS
    return np.array(out, dtype=np.int64)
