"""Packages are found, not listed: a subpackage added later is installed without a
change here (a hand-kept list once left one out, and the installed bladec could not
import). The grammar lives at the top of the repository and installs as bladec.grammar."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["bladec", "bladec.*"]) + ["bladec.grammar"])
