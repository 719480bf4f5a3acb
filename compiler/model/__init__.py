"""The policy model: YAML files in, a validated :class:`~compiler.model.validate.Project` out.

``loader`` reads and merges a policy directory keeping every node's position (``source``),
through the parse cache (``parsecache``); ``scalars`` catches YAML 1.1 misreadings; ``schema``
holds the pydantic classes; ``validate`` resolves references and locates every error. Column
types (``types``, ``typenames``), hand-written predicates (``expressions``, ``exprcheck``), salt
references (``salts``), the rule table (``rules``) and where a probe reaches (``probe_places``)
live here because validation needs them. No platform SQL is written here.
"""
