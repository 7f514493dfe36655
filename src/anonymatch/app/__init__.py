"""The application layer: what the command line and the web app need around the library.

``jobfile`` (the TOML job files, ``anonymatch-job/1``), ``outputs`` (the output-path policy of
every writer) and ``infer`` (the draft job file of ``anonymatch init``). ``cli``, ``ui`` and
``report`` may import it; no data kind and not ``core`` do (``tests/test_layout.py``).
"""
