"""Scripted models for the search e2e tests: what a policy, a reward model and a rephraser would answer on the shop.

The scripts are written so that one prompt variation (the rephrased task) sees the better move while the plain prompts
are led astray, which is the situation search exists for. Answers read ids and prices off the live page through the
scripted model's placeholders; nothing about the shop's data is hard-coded.
"""

from __future__ import annotations

from branchwise.sandbox.landmarks import HERB_PLANTER, NOVEL_WITHOUT_REVIEWS
from branchwise.scripted_model import Script
from branchwise.scripted_model.script import Rule
from branchwise.search.webpilot import PLAN_FAILED

PRICE = r"\$\d+\.\d\d"
GARDEN_TASK = "What is the price of the cheapest product in the Garden category?"
DEAL_TASK = "What is the price of the first product listed in the Garden category?"
# A landmark product: it exists in every seeded shop and has neither sizes nor colors to choose.
CART_PRODUCT = NOVEL_WITHOUT_REVIEWS
CART_TASK = f"Add {CART_PRODUCT} to my shopping cart."
ADDED = r"Added .+? to your cart\."
PLANTER_TASK = f"What is the price of the {HERB_PLANTER}?"

CHECKLIST = ("Checklist 1: Sort the Garden products by price - order them from low to high\n"
             "Checklist 2: Read the first price - the cheapest product comes first")
REPHRASED = ("# REPHRASED TASK:\nFind the lowest price among the products of the Garden category.\n"
             "# SUBGOALS:\n- Apply the sort order before reading prices\n"
             "# AMBIGUITIES OR ASSUMPTIONS:\n- none\n# CAUTIONS:\n- A sort order that is chosen but not applied "
             "does not reorder the page")


def cot_answer(thought: str, action: str) -> str:
    """A policy answer in the WebArena chain-of-thought format: the reasoning, then the action in a code span."""
    return f"Let's think step-by-step. {thought} In summary, the next action I will perform is ```{action}```"


def _judge(*labels: str) -> str:
    lines = "\n".join(f"Checklist {i}: {label}" for i, label in enumerate(labels, start=1))
    return f"The proposal is judged against item 1 and item 2.\n{lines}"


def _common(task: str) -> list[Rule]:
    return [
        Rule(name="checklist", when_contains=["Starting URL:"], reply=CHECKLIST),
        Rule(name="rephrase", when_contains=["Task: " + task], search_in="last_user", reply=REPHRASED),
    ]


def garden_script() -> Script:
    """Home -> Garden -> choose "Price: low to high" -> the plain prompts then page on (a dead end with a wrong
    answer), the rephrased one presses Sort, which leads to the right answer."""
    objective = f"OBJECTIVE: {GARDEN_TASK}"
    rules = _common(GARDEN_TASK) + [
        # Reward model: judged on the proposal's thought, as a real judge reads it.
        Rule(name="judge: answer on the sorted page", when_contains=["Proposed step:", "ACTION: stop"],
             when_regex=r"sort=price-asc", reply=_judge("Yes", "Yes")),
        Rule(name="judge: answer elsewhere", when_contains=["Proposed step:", "ACTION: stop"],
             reply=_judge("No", "No")),
        Rule(name="judge: next page", when_contains=["Proposed step:", "more products"],
             reply=_judge("In Progress", "In Progress")),
        Rule(name="judge: press sort", when_contains=["Proposed step:", "press the Sort button"],
             reply=_judge("In Progress", "No")),
        Rule(name="judge: anything else", when_contains=["Proposed step:"], reply=_judge("In Progress", "No")),
        # Policy.
        Rule(name="sorted: read the first price", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/garden\?\S*sort=price-asc",
             reply=cot_answer("The products are sorted from low to high, so the first price is the cheapest.",
                        f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(name="page 2, rephrased: go back", when_contains=[objective, "Subgoals:"], search_in="last_user",
             when_regex=r"URL: \S*/category/garden\?\S*page=2",
             reply=cot_answer("This page is not sorted; the sort order was never applied.", "go_back")),
        Rule(name="page 2: answer (wrongly)", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/garden\?\S*page=2",
             reply=cot_answer("These look like the cheapest products.", f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(name="sort chosen, rephrased: apply it",
             when_contains=[objective, "Subgoals:", "combobox 'Sort by' value: 'Price: low to high'"],
             search_in="last_user",
             reply=cot_answer("The order is chosen but not applied yet, so I press the Sort button.",
                        "click [{{id: button 'Sort'}}]")),
        Rule(name="sort chosen: look further",
             when_contains=[objective, "combobox 'Sort by' value: 'Price: low to high'"],
             search_in="last_user",
             reply=cot_answer("The cheapest product may be among more products on the next page.",
                        "click [{{id: link 'Next page'}}]")),
        Rule(name="garden: choose the order", when_contains=[objective, "combobox 'Sort by'"], search_in="last_user",
             when_regex=r"URL: \S*/category/garden",
             reply=cot_answer("Sorting by price from low to high puts the cheapest product first.",
                        "select_option [{{id: combobox 'Sort by'}}] [Price: low to high]")),
        Rule(name="home: open the category", when_contains=[objective, "link 'Garden'"], search_in="last_user",
             reply=cot_answer("The Garden category is linked from the home page.", "click [{{id: link 'Garden'}}]")),
    ]
    return Script(rules=rules)


def deals_script() -> Script:
    """On the deals page, two prompts open Garden, the rephrased one the featured deal (which changes on reload)."""
    objective = f"OBJECTIVE: {DEAL_TASK}"
    rules = _common(DEAL_TASK) + [
        Rule(name="judge: answer", when_contains=["Proposed step:", "ACTION: stop"], reply=_judge("Yes", "Yes")),
        Rule(name="judge: open garden", when_contains=["Proposed step:", "Garden category"],
             reply=_judge("In Progress", "In Progress")),
        Rule(name="judge: anything else", when_contains=["Proposed step:"], reply=_judge("In Progress", "No")),
        Rule(name="garden: read the first price", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/garden",
             reply=cot_answer("The first product of the Garden category is listed first.",
                        f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(name="deals, rephrased: open the featured deal", when_contains=[objective, "Subgoals:"],
             search_in="last_user",
             reply=cot_answer("The featured deal may be a Garden product.",
                        r"click [{{match: \[(\d+)\] link 'Deal of the moment}}]")),
        Rule(name="deals: open garden", when_contains=[objective], search_in="last_user",
             reply=cot_answer("The Garden category is in the navigation.", "click [{{id: link 'Garden'}}]")),
    ]
    return Script(rules=rules)


def best_first_script() -> Script:
    """The garden task for best-first search: the policy's samples split between paging on and pressing Sort (paging
    is the more frequent sample, so it is tried first), and the value function tells a sorted page and a correct
    answer from the rest."""
    objective = f"OBJECTIVE: {GARDEN_TASK}"
    value = "Agent's answer to the user:"
    next_page = cot_answer("The cheapest product may be among more products on the next page.",
                     "click [{{id: link 'Next page'}}]")
    press_sort = cot_answer("The order is chosen but not applied yet, so I press the Sort button.",
                      "click [{{id: button 'Sort'}}]")
    rules = [
        Rule(name="value: answer from the sorted page", when_contains=[value, "Agent's answer to the user: $"],
             when_regex=r"Current URL: \S*sort=price-asc", reply="Thoughts: sorted, first price.\nStatus: success"),
        Rule(name="value: sorted page", when_contains=[value], when_regex=r"Current URL: \S*sort=price-asc",
             reply="Thoughts: sorted.\nStatus: failure\nOn the right track to success: yes"),
        Rule(name="value: unsorted page 2", when_contains=[value], when_regex=r"Current URL: \S*page=2",
             reply="Thoughts: not sorted.\nStatus: failure\nOn the right track to success: no"),
        Rule(name="value: on the way", when_contains=[value],
             reply="Thoughts: getting there.\nStatus: failure\nOn the right track to success: yes"),
    ]
    rules += [
        Rule(name="sorted: read the first price", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/garden\?\S*sort=price-asc",
             reply=cot_answer("The products are sorted from low to high, so the first price is the cheapest.",
                        f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(name="page 2: answer (wrongly)", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/garden\?\S*page=2",
             reply=cot_answer("These look like the cheapest products.", f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(name="sort chosen: page on or press sort",
             when_contains=[objective, "combobox 'Sort by' value: 'Price: low to high'"], search_in="last_user",
             replies=[next_page, next_page, next_page, press_sort, press_sort]),
        Rule(name="garden: choose the order", when_contains=[objective, "combobox 'Sort by'"], search_in="last_user",
             when_regex=r"URL: \S*/category/garden",
             reply=cot_answer("Sorting by price from low to high puts the cheapest product first.",
                        "select_option [{{id: combobox 'Sort by'}}] [Price: low to high]")),
        Rule(name="home: open the category", when_contains=[objective, "link 'Garden'"], search_in="last_user",
             reply=cot_answer("The Garden category is linked from the home page.", "click [{{id: link 'Garden'}}]")),
    ]
    return Script(rules=rules)


def cart_script() -> Script:
    """Best-first search from the product page: the only move is "Add to cart" (a POST form, so destructive); on the
    cart page the policy reports the shop's confirmation, which the value function counts as success."""
    objective = f"OBJECTIVE: {CART_TASK}"
    value = "Agent's answer to the user:"
    rules = [
        Rule(name="value: the cart confirms it", when_contains=[value, "Agent's answer to the user: Added "],
             when_regex=r"Current URL: \S*/cart", reply="Thoughts: the shop confirms the book is in the cart.\n"
                                                    "Status: success"),
        Rule(name="value: on the way", when_contains=[value],
             reply="Thoughts: not in the cart yet.\nStatus: failure\nOn the right track to success: yes"),
        Rule(name="cart: report the confirmation", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/cart\?\S*notice=added",
             reply=cot_answer("The cart page confirms the book was added.", f"stop [{{{{match: {ADDED}}}}}]")),
        Rule(name="product: add to cart", when_contains=[objective, "button 'Add to cart'"], search_in="last_user",
             reply=cot_answer("This is the book's page; the Add to cart button puts it in the cart.",
                        "click [{{id: button 'Add to cart'}}]")),
    ]
    return Script(rules=rules)


def planter_script(*, detour: bool = False) -> Script:
    """Best-first search on an information question: search the shop, open the product, read its price off the page.

    Plain: the value function calls the product page itself a success before anything is answered, as real models do;
    the answer has to come from the policy there. With `detour`, the product page is only on the right track and the
    policy's samples there split between opening the product's category (more often, so it runs first: a dead end)
    and answering. The answer, proposed on the product page, wins after search has moved on to the category.
    """
    objective = f"OBJECTIVE: {PLANTER_TASK}"
    value = "Agent's answer to the user:"
    answer = cot_answer("The product page shows the price.", f"stop [{{{{match: {PRICE}}}}}]")
    open_category = cot_answer("The category page may list a better price.", "click [{{id: link 'Garden'}}]")
    rules = [
        Rule(name="value: the price answered", when_contains=[value, "Agent's answer to the user: $"],
             reply="Thoughts: the answer is the product's price.\nStatus: success"),
    ]
    if detour:
        rules += [
            Rule(name="value: product page", when_contains=[value], when_regex=r"Current URL: \S*/product/\d+",
                 reply="Thoughts: the product is open; the price is not answered yet.\nStatus: failure\n"
                       "On the right track to success: yes"),
            Rule(name="value: category page", when_contains=[value], when_regex=r"Current URL: \S*/category/",
                 reply="Thoughts: a list of products, not the one asked about.\nStatus: failure\n"
                       "On the right track to success: no"),
        ]
    else:
        rules.append(Rule(name="value: product page", when_contains=[value],
                          when_regex=r"Current URL: \S*/product/\d+",
                          reply="Thoughts: the product page shows its price.\nStatus: success"))
    rules += [
        Rule(name="value: on the way", when_contains=[value],
             reply="Thoughts: getting there.\nStatus: failure\nOn the right track to success: yes"),
        Rule(name="product: answer", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/product/\d+",
             replies=[open_category, open_category, open_category, answer, answer] if detour else [answer]),
        Rule(name="category: go home", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/",
             reply=cot_answer("This is a list of products.", "click [{{id: link 'Home'}}]")),
        Rule(name="results: open the product", when_contains=[objective, f"link '{HERB_PLANTER}'"],
             search_in="last_user",
             reply=cot_answer("The product is among the results.", f"click [{{{{id: link '{HERB_PLANTER}'}}}}]")),
        Rule(name="home: search", when_contains=[objective, "searchbox 'Search products'"], search_in="last_user",
             reply=cot_answer("I search the shop for the product.",
                        "type [{{id: searchbox 'Search products'}}] [Rootstock herb planter] [1]")),
    ]
    return Script(rules=rules)


PILOT_PLANNER = "You are the Planner of a web agent."
PILOT_CONTROLLER = "You are the Controller of a web agent."
PILOT_EXTRACTOR = "You are the Extractor of a web agent."
PILOT_APPRAISER = "You are the Appraiser of a web agent."
PILOT_REFLECT = "You are the Explorer of a web agent, looking back"
BROWSE_BOOKS = "Browse the Books category to find the planter"
SEARCH_BY_NAME = f"Search the shop for {HERB_PLANTER} and open its page"


def mcts_replan_script() -> Script:
    """WebPilot (`mcts`) on the planter question: the first plan browses Books, where the planter is not; the
    Controller calls the subtask incomplete twice and says why; the Planner, told so, searches by name instead, the
    Controller accepts the product page and the Extractor reads the price there."""
    rules = [
        Rule(name="planner: refined plan", when_contains=[PILOT_PLANNER, PLAN_FAILED],
             reply=f"Subtask 1: {SEARCH_BY_NAME}\nSubtask 2: Extract: the price of the {HERB_PLANTER}"),
        Rule(name="planner: first plan", when_contains=[PILOT_PLANNER],
             reply=f"Subtask 1: {BROWSE_BOOKS}\nSubtask 2: Extract: the price of the {HERB_PLANTER}"),
        Rule(name="controller: product page", when_contains=[PILOT_CONTROLLER], when_regex=r"Current URL: \S*/product/",
             reply="The product's own page is open.\nComplete: yes\nReflection: the price is on this page"),
        Rule(name="controller: anything else", when_contains=[PILOT_CONTROLLER],
             reply="This page lists books; the planter is a garden product and is not here.\nComplete: no\n"
                   "Reflection: the planter is not a book; search the shop by the product's name instead"),
        Rule(name="extractor: product page", when_contains=[PILOT_EXTRACTOR], when_regex=r"Current URL: \S*/product/",
             reply=f"The page shows the price.\nAnswer: {{{{match: {PRICE}}}}}"),
        Rule(name="extractor: elsewhere", when_contains=[PILOT_EXTRACTOR], reply="Answer: N/A"),
        Rule(name="appraiser", when_contains=[PILOT_APPRAISER],
             reply="The action did what it meant to.\nEffectiveness: 6\nFuture promise: 6"),
        Rule(name="reflection", when_contains=[PILOT_REFLECT],
             reply="Effect: another page opened\nChild reflection: look for the product here\n"
                   "Sibling reflection: searching by name may be quicker"),
        Rule(name="explorer: open the product", when_contains=[f"Current subtask: {SEARCH_BY_NAME}",
                                                               f"link '{HERB_PLANTER}'"], search_in="last_user",
             reply=cot_answer("The product is among the results.", f"click [{{{{id: link '{HERB_PLANTER}'}}}}]")),
        Rule(name="explorer: search", when_contains=[f"Current subtask: {SEARCH_BY_NAME}",
                                                     "searchbox 'Search products'"], search_in="last_user",
             reply=cot_answer("I search the shop for the product.",
                              f"type [{{{{id: searchbox 'Search products'}}}}] [{HERB_PLANTER}] [1]")),
        Rule(name="explorer: books page", when_contains=[f"Current subtask: {BROWSE_BOOKS}"], search_in="last_user",
             when_regex=r"URL: \S*/category/books",
             reply=cot_answer("I do not see the planter among these books.", "stop [N/A]")),
        Rule(name="explorer: open books", when_contains=[f"Current subtask: {BROWSE_BOOKS}", "link 'Books'"],
             search_in="last_user",
             reply=cot_answer("The Books category may list it.", "click [{{id: link 'Books'}}]")),
    ]
    return Script(rules=rules)


EXPLORE_OBJECTIVE = "Explore the website"
EXPLORED = f"Find {CART_PRODUCT} and the category it belongs to"


def explore_script() -> Script:
    """One exploration episode on the shop: search for a book, open it, try to add it to the cart (a POST form:
    destructive, refused without a question), go to its category, then home; the labeller names what the four steps
    did, the reward model scores it 5, and the relabeller explains each step. Then the planter question's policy for
    `run --examples`, whose prompt should show that demonstration."""
    explorer = [f"OBJECTIVE: {EXPLORE_OBJECTIVE}"]
    return Script(rules=[
        Rule(name="summary", when_contains=["You are the state-change summariser"],
             reply="The page changed.\nState change: another page of the shop opened"),
        Rule(name="label", when_contains=["You are the instruction labeller"],
             reply=f"The agent searched for the planter and opened its category.\nInstruction: {EXPLORED}\n"
                   "Answer: Books"),
        Rule(name="reward", when_contains=["You are the outcome reward model"],
             reply="Every step served the instruction.\nScore: 5"),
        Rule(name="relabel", when_contains=["You are writing a demonstration"],
             reply="Step 1: I search the shop for the book by name.\nStep 2: The book is among the results.\n"
                   "Step 3: Its category link shows where it belongs.\nStep 4: Back to the home page."),
        Rule(name="explore: add to cart", when_contains=[*explorer, "button 'Add to cart'"], search_in="last_user",
             max_uses=1, reply=cot_answer("A shopper would try the cart.", "click [{{id: button 'Add to cart'}}]")),
        Rule(name="explore: product's category", when_contains=explorer, search_in="last_user",
             when_regex=r"URL: \S*/product/",
             reply=cot_answer("The category shows similar products.", "click [{{id: link 'Books'}}]")),
        Rule(name="explore: home", when_contains=explorer, search_in="last_user", when_regex=r"URL: \S*/category/",
             reply=cot_answer("Back to the start.", "click [{{id: link 'Home'}}]")),
        Rule(name="explore: open the result", when_contains=[*explorer, f"link '{CART_PRODUCT}'"],
             search_in="last_user",
             reply=cot_answer("The book is listed.", f"click [{{{{id: link '{CART_PRODUCT}'}}}}]")),
        Rule(name="explore: search", when_contains=[*explorer, "searchbox 'Search products'"], search_in="last_user",
             reply=cot_answer("I look for a book.",
                              f"type [{{{{id: searchbox 'Search products'}}}}] [{CART_PRODUCT}] [1]")),
        *planter_script().rules,
    ])
