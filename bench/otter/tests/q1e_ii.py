OK_FORMAT = True

test = {
    "name": "q1e_ii",
    "points": 4,
    "suites": [
        {
            "cases": [
                {
                    "code": ">>> from attention_check import c1_ok\n>>> c1_ok(V, K, Q, beta=20.0) and c1_ok(V, K, Q, beta=40.0)\nTrue\n",
                    "hidden": False,
                    "locked": False,
                    "points": 2,
                },
                {
                    "code": ">>> from attention_check import c2_ok\n>>> c2_ok(V, K, Q, beta=20.0) and c2_ok(V, K, Q, beta=40.0)\nTrue\n",
                    "hidden": False,
                    "locked": False,
                    "points": 2,
                },
            ],
            "scored": True,
            "setup": "",
            "teardown": "",
            "type": "doctest",
        }
    ],
}
