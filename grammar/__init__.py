"""Package data: the listing grammar, installed as ``bladec.grammar``."""
