"""The SIMULATED tools: hipblaslt-bench, the Tensile driver and hipBLASLt's library, answered by
tensilekit's GPU model, behind the same interfaces as AMD's tools (``tensilekit tune --simulate``).

* :mod:`.config` -- the SIMULATED label and :class:`~.config.SimulatorConfig` (light);
* :mod:`.gpu` -- the GPU model: kernel catalogue, times, errors, the tuned library's table;
* :mod:`.bench` -- :class:`~.bench.SimulatedBenchRunner`, the bench's command lines;
* :mod:`.library` -- the installed library as tensilelite logic files;
* :mod:`.tensile` -- :class:`~.tensile.SimulatedTensileRunner`, the Tensile driver.

Stages never import these: :func:`tensilekit.tools.toolset.toolset_for` hands them the tools.
This package imports nothing, so naming :mod:`.config` does not load the model.
"""
