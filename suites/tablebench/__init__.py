"""TableBench (Wu et al. 2025): fact-checking, numerical-reasoning and data-analysis questions
over one table each, with TableBench's own DP prompts; the suite is ``suite.py``."""
