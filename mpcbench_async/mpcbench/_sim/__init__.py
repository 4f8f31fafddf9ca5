"""MPCBench's policies for the simulated provider, kept beside the benchmark whose prompts they read.

Importing this package registers them into the sim's policy registry:
``sim/judge`` and ``sim/lazy-agent`` (``_judge_policy``), ``sim/oracle-agent``
(``_oracle``) and ``sim/generator`` (``_procgen``). They parse MPCBench's prompt
wording, so they change with the benchmark, not with the server. The sim never
imports them: the package root's wiring (``mpcbench_async/_wiring.py``) adds a
policy loader that imports this package the first time a policy is looked up.
"""

from . import _judge_policy, _oracle, _procgen  # noqa: F401  (imported for their registrations)
