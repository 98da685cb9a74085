"""The registry of checks: every way a part can be graded, in one place.

A part names its checks in its problem file; this dict is the only lookup, so a
reader finds every check here and a problem file cannot reach anything else. Each
entry declares the params it takes; the bank validates a problem file against them
when it loads, so a typo is the instructor's error at load time, not every student's.
"""

from __future__ import annotations

from . import (
    accuracy,
    attention_qkv,
    attention_query,
    bigo,
    checkpoint,
    choice,
    dimensions,
    equivalent,
    manual,
    notebook_code,
    rotation,
    span_corruption,
    synthesizer,
    torch_module,
)
from .base import Check, Context, Outcome, Param
from .messages import Finding

REGISTRY: dict[str, Check] = {
    c.name: c
    for c in (
        # the formula equals the key (random instances first, then exact confirmation)
        Check("equivalent", equivalent.check, needs_key=True, params=(Param("must_use", (list,)),)),
        # an order of growth O(...) compared with the key's along growth paths
        Check("bigO", bigo.check, needs_key=True, params=bigo.PARAMS, prepare=bigo.prepare),
        # yes/no or one of several options, against the key
        Check("choice", choice.check, needs_key=True),
        # free text, scored by a person
        Check("manual", manual.check),
        # a query (or one per head) whose attention weights tend to a target
        Check("attention_query", attention_query.check_query, params=attention_query.PARAMS,
              prepare=attention_query.prepare_query),
        # V, K, Q whose self-attention outputs tend to targets as β grows
        Check("attention_qkv", attention_qkv.check_qkv, params=attention_qkv.PARAMS, prepare=attention_qkv.prepare_qkv,
              partial=True),
        # a prediction file's accuracy recomputed against gold, with the reported numbers
        Check("accuracy_file", accuracy.check, params=accuracy.PARAMS, prepare=accuracy.prepare),
        # the model checkpoint behind a dev prediction file, loaded (weights only) and decoded again in the
        # sandbox: does it give the file's answers?
        Check("checkpoint", checkpoint.check, params=checkpoint.PARAMS, prepare=checkpoint.prepare,
              runs_code=True, code_fields=checkpoint.code_fields),
        # M with p_{t+1} = M p_t for a sinusoidal encoding: block-diagonal, each 2×2 block advancing
        # its pair (sin ω_k t, cos ω_k t) by one step for every t (or a single such block)
        Check("shift_block", rotation.check, prepare=rotation.prepare, params=rotation.PARAMS),
        # a shape such as t × n, against the key
        Check("dimensions", dimensions.check, needs_key=True),
        # student PyTorch code run in the sandbox (attngrade.sandbox), checked by its properties
        Check("span_corruption", span_corruption.check, params=span_corruption.PARAMS,
              prepare=span_corruption.prepare, runs_code=True),
        Check("synthesizer", synthesizer.check, params=synthesizer.PARAMS, prepare=synthesizer.prepare,
              runs_code=True),
        Check("torch_module", torch_module.check, params=torch_module.PARAMS, prepare=torch_module.prepare,
              runs_code=True),
        # the functions a Jupyter notebook defines, read without a kernel, run in the sandbox, checked by
        # their properties
        Check("notebook_code", notebook_code.check, params=notebook_code.PARAMS, prepare=notebook_code.prepare,
              runs_code=True),
    )
}

__all__ = ["REGISTRY", "Check", "Context", "Finding", "Outcome", "Param"]
