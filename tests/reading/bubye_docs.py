"""The search results of the Bubye River question (two hops: the river's country, then its waterfall), shared by
the tests of the slot filler and of the extractive answer."""

from __future__ import annotations

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def doc(i: int, title: str, text: str) -> dict:
    return {"id": str(i), "url": f"local://t/{i}", "title": title, "snippet": text}


BRIDGE = [
    doc(
        1,
        "Bubye River",
        "The Bubye River is a tributary of the Limpopo River in Gwanda District, Zimbabwe. It rises "
        "near West Nicholson.",
    ),
    doc(
        2,
        "Victoria Falls",
        "Victoria Falls is a waterfall on the Zambezi River at the border between Zambia and "
        "Zimbabwe. It is one of the largest falls.",
    ),
    doc(3, "Cascade Falls", "Cascade Falls is a waterfall on the Kettle River in British Columbia."),
    doc(4, "Zimbabwe", "Zimbabwe is a landlocked country in Southern Africa."),
]
