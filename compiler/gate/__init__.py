"""The promotion gate: the mesh manifest written from the model and the evidence
(:mod:`.manifest`), the Rego engine that evaluates a promotion policy over it
(:mod:`.engine`, accord's default policy in ``policy.rego``), and the prover that shows a
policy cannot fail open (:mod:`.prove`)."""
