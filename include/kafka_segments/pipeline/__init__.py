"""The runs that change a lake: retention (``run``) and ``delete-records``, each recover → adopt → plan →
commit → gc, with a report a person can read and a JSON one a program can."""
