"""Planted in the folder the sandbox's fallback interpreter starts in (the system's temporary
folder, shared by every user): an interpreter that puts its working folder on its path imports
this instead of attngrade, and runs it as the grader."""
import os

with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "planted-ran"), "w") as mark:
    mark.write("this ran as the grader\n")
raise ImportError("planted")
