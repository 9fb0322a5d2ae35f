"""Module scopes collapsed into boxes that expand, for the interactive drawing of a big model.

A traced model's nodes carry the module they ran in (``__module.encoder.0``).
``collapse_scopes`` adds to a graph model a second top view in which each
submodule that holds several nodes is one box (role ``module``, labelled with
its attribute name), whose child view draws its nodes, with its own
submodules collapsed the same way. Edges into and out of a module go to its
box; in its view they enter as input nodes and leave through a ``->`` node,
as a block's values do. The interactive view opens on this drawing, and a
click on a box opens its module beside it; the static picture draws the full
graph with one cluster per module instead (``layout.py``).
"""

from __future__ import annotations

MIN_NODES = 2  # a module with fewer nodes stays drawn as its nodes: a box would hide nothing


def scope_parts(scope: str) -> tuple:
    """``("encoder", "0")`` for ``__module.encoder.0``."""
    parts = tuple(p for p in (scope or "").split(".") if p)
    return parts[1:] if parts[:1] == ("__module",) else parts


def _new_node(model: dict, role: str, kind: str, label: str, type_text: str, scope: str = "") -> dict:
    nid = f"{model['prefix']}n{len(model['nodes'])}"
    entry = {"id": nid, "role": role, "kind": kind, "label": label, "type": type_text, "call": [], "inputs": [],
             "outputs": [], "attributes": {}, "source": None, "code": None, "scope": scope, "children": [],
             "kernel": None, "time_us": None, "calls": None}
    model["nodes"][nid] = entry
    return entry


def _new_view(model: dict, title: str) -> dict:
    vid = f"{model['prefix']}v{len(model['views'])}"
    view = {"id": vid, "title": title, "nodes": [], "edges": []}
    model["views"][vid] = view
    return view


def _value_types(model: dict, view: dict) -> dict:
    """``{value name: type}`` of the values made in ``view``, as the details of their producers list them (a
    node with several outputs gives each its own type; a module call's result has the shape it was traced with)."""
    out: dict = {}
    for nid in view["nodes"]:
        for o in model["nodes"][nid]["outputs"]:
            out.setdefault(o["name"], o["type"])
    return out


def collapse_scopes(model: dict, vid: str, depth: int = 0) -> str:
    """The id of a view like ``vid`` with its modules (at scope ``depth``) as expandable boxes; ``vid`` itself
    when no module has ``MIN_NODES`` nodes. The model gains the new nodes and views; nothing is changed."""
    view, nodes = model["views"][vid], model["nodes"]
    types = _value_types(model, view)
    groups: dict = {}
    for nid in view["nodes"]:
        parts = scope_parts(nodes[nid]["scope"])
        if len(parts) > depth:
            groups.setdefault(parts[: depth + 1], []).append(nid)
    groups = {k: ids for k, ids in groups.items() if len(ids) >= MIN_NODES}
    if not groups:
        return vid
    top = _new_view(model, view["title"])
    top["scope_depth"] = view.get("scope_depth", 0)
    owner: dict = {}
    boxes: dict = {}
    for path, ids in groups.items():
        parent = "__module." + ".".join(path[:-1]) if len(path) > 1 else ""  # clustered with its siblings
        box = _new_node(model, "module", "module", path[-1], f"{len(ids)} nodes", parent)
        boxes[path] = box
        owner.update({nid: box["id"] for nid in ids})
    for nid in view["nodes"]:
        if nid not in owner:
            top["nodes"].append(nid)
        elif owner[nid] not in top["nodes"]:
            top["nodes"].append(owner[nid])
    seen = set()
    for e in view["edges"]:
        src, dst = owner.get(e["src"], e["src"]), owner.get(e["dst"], e["dst"])
        if src == dst or (src, dst, e["value"]) in seen:
            continue
        seen.add((src, dst, e["value"]))
        top["edges"].append({**e, "src": src, "dst": dst})
    for path, ids in groups.items():
        box = boxes[path]
        inner = _new_view(model, f"module {'.'.join(path)}")
        inner["scope_depth"] = depth + 1  # its own scope is the view itself: no cluster for it
        members = set(ids)
        entry: dict = {}  # (outer source, value) -> its input node in the module's view
        leaving: list = []
        for e in view["edges"]:
            inside_src, inside_dst = e["src"] in members, e["dst"] in members
            if inside_dst and not inside_src and (e["src"], e["value"]) not in entry:
                n = _new_node(model, "input", "input", e["value"], nodes[e["src"]]["type"])
                n["outputs"] = [{"name": e["value"], "type": types.get(e["value"], n["type"])}]
                entry[(e["src"], e["value"])] = n["id"]
                box["inputs"].append({"name": e["value"], "type": n["outputs"][0]["type"], "constant": None})
            elif inside_src and not inside_dst and e["value"] not in [v for _, v in leaving]:
                leaving.append((e["src"], e["value"]))
        inner["nodes"] = [entry[k] for k in entry] + list(ids)
        inner["edges"] = [{**e, "src": entry.get((e["src"], e["value"]), e["src"])} for e in view["edges"]
                          if e["dst"] in members]
        ret = _new_node(model, "output", "return", "->", "")
        ret["inputs"] = [{"name": v, "type": types.get(v, nodes[s]["type"]), "constant": None} for s, v in leaving]
        inner["nodes"].append(ret["id"])
        labels = {e["value"]: e["label"] for e in view["edges"]}
        inner["edges"] += [{"src": s, "dst": ret["id"], "value": v, "label": labels.get(v, "")} for s, v in leaving]
        box["outputs"] = [{"name": v, "type": types.get(v, nodes[s]["type"])} for s, v in leaving]
        box["children"] = [collapse_scopes(model, inner["id"], depth + 1)]
    return top["id"]
