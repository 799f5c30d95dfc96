"""Ways to look at an embedding space: PCA, concept planes (Gram-Schmidt), t-SNE, analogies, probes.

Every function takes plain arrays ([point, dimension]) so the same code maps the toy tables of
the notes, the shipped models' embeddings and the residual stream.
"""
from lib.analysis.maps.pca import PCA, pca, unit_sphere
from lib.analysis.maps.concepts import ConceptPlane, concept_plane, direction, gram_schmidt, random_plane_spread, spread_captured
from lib.analysis.maps.analogy import Analogy, AnalogyScore, analogy, score_analogies, score_analogy
from lib.analysis.maps.probes import PROBE_ALPHAS, ProbeResult, best_probe, linear_probe
from lib.analysis.maps.tsne import tsne, check_perplexity
from lib.analysis.maps.neighbours import cosine_matrix, nearest, nearest_indices, role_cohesion, same_group_share

__all__ = ["PCA", "pca", "unit_sphere", "ConceptPlane", "concept_plane", "direction", "gram_schmidt",
           "spread_captured", "random_plane_spread", "Analogy", "AnalogyScore", "analogy", "score_analogy", "score_analogies", "PROBE_ALPHAS", "ProbeResult", "best_probe", "linear_probe", "tsne", "check_perplexity",
           "cosine_matrix", "nearest", "nearest_indices", "role_cohesion", "same_group_share"]
