"""Imported once by the hardening tests' fork server: memsql, Chroma and the embedding model.

Loading them costs seconds; paid here, every forked partition run starts at once, which is
what lets the crash test kill at many random points within its time budget. Only loading happens
here (no inference, no Chroma client, no Redis): those start threads, and threads do not survive a fork.
"""

import memsql_assets.lib.harness.evaluate  # noqa: F401
from memsql_assets.lib.memory.embeddings import embedding_function

embedding_function().load()  # the weights too: the forked runs may embed

# tqdm (the libraries' progress bars) creates a multiprocessing lock on first use; made here
# once, rather than in every forked run, where each SIGKILL would leak its semaphore.
from tqdm import tqdm  # noqa: E402

tqdm.get_lock()
