"""What bladec.autobatch makes from a model's weights and keeps from batch to batch
while the weights are the same arrays: copies laid out as the kernels read them
(derived.py) and tables of what a cell computes from its weights and one integer
operand (tabulate.py)."""
