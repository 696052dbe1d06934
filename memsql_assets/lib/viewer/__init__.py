"""`memsql view`: a local web viewer over a home's turn results (list, one turn, two partitions compared)."""
