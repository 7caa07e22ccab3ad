"""Fixed inputs and the loss/metric configurations the numerics tests run; TF 2.21's answers
for them live in tests/keras/keras_facts.py (printed by running the same table in TF)."""
import numpy as np

INPUTS = {
    # probabilities / binary labels, shape (3, 4)
    "binary": (np.array([[0, 1, 1, 0], [1, 0, 1, 1], [0, 0, 1, 0]], np.float32),
               np.array([[0.1, 0.8, 0.6, 0.3], [0.7, 0.2, 0.9, 0.55], [0.05, 0.4, 0.65, 0.2]], np.float32)),
    # regression, shape (3, 4)
    "regress": (np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.5, -1.0, 2.0], [2.5, 0.3, 0.7, -0.4]], np.float32),
                np.array([[1.2, -1.0, 0.0, 2.5], [0.4, 1.0, -3.0, 2.1], [2.0, 0.9, 0.1, 0.6]], np.float32)),
    # positive regression (log losses), shape (3, 4)
    "positive": (np.array([[1.0, 2.0, 0.5, 3.0], [0.2, 1.5, 1.0, 2.0], [2.5, 0.3, 0.7, 0.4]], np.float32),
                 np.array([[1.2, 1.0, 0.3, 2.5], [0.4, 1.0, 3.0, 2.1], [2.0, 0.9, 0.1, 0.6]], np.float32)),
    # one-hot targets and probabilities over 4 classes
    "onehot": (np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]], np.float32),
               np.array([[0.1, 0.6, 0.2, 0.1], [0.5, 0.2, 0.2, 0.1], [0.3, 0.3, 0.3, 0.1]], np.float32)),
    # one-hot targets and logits
    "logits": (np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]], np.float32),
               np.array([[0.5, 2.0, -1.0, 0.1], [1.5, 0.2, -0.3, 0.0], [-1.0, 0.3, 2.2, 0.4]], np.float32)),
    # integer labels and probabilities
    "sparse": (np.array([1, 0, 3], np.int32),
               np.array([[0.1, 0.6, 0.2, 0.1], [0.5, 0.2, 0.2, 0.1], [0.3, 0.3, 0.3, 0.1]], np.float32)),
}
SAMPLE_WEIGHT = np.array([0.5, 2.0, 1.0], np.float32)

LOSSES = [
    ("MeanAbsolutePercentageError", {}, "regress"),
    ("MeanSquaredLogarithmicError", {}, "regress"),
    ("CosineSimilarity", {}, "regress"),
    ("CosineSimilarity", {"axis": 0}, "regress"),
    ("Huber", {}, "regress"),
    ("Huber", {"delta": 0.5}, "regress"),
    ("LogCosh", {}, "regress"),
    ("Hinge", {}, "binary"),
    ("Hinge", {}, "regress"),
    ("SquaredHinge", {}, "binary"),
    ("CategoricalHinge", {}, "onehot"),
    ("KLDivergence", {}, "onehot"),
    ("Poisson", {}, "positive"),
    ("BinaryFocalCrossentropy", {}, "binary"),
    ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5}, "binary"),
    ("BinaryFocalCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "regress"),
    ("CategoricalFocalCrossentropy", {}, "onehot"),
    ("CategoricalFocalCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "logits"),
    ("Dice", {}, "binary"),
    ("Dice", {"axis": 1}, "binary"),
    ("Tversky", {"alpha": 0.3, "beta": 0.7}, "binary"),
    ("CategoricalGeneralizedCrossEntropy", {"q": 0.7}, "sparse"),
    ("MeanSquaredError", {"reduction": "sum"}, "regress"),
    ("Huber", {"reduction": None}, "regress"),
    ("LogCosh", {"reduction": "mean_with_sample_weight"}, "regress"),
]

METRICS = [
    # (class name, constructor kwargs, input key, update with sample_weight?)
    ("AUC", {}, "binary", False),
    ("AUC", {"curve": "PR"}, "binary", False),
    ("AUC", {"num_thresholds": 50, "summation_method": "minoring"}, "binary", True),
    ("AUC", {"from_logits": True}, "regress", False),
    ("AUC", {"multi_label": True}, "binary", False),
    ("Precision", {}, "binary", False),
    ("Precision", {"thresholds": [0.3, 0.6]}, "binary", True),
    ("Precision", {"top_k": 2}, "binary", False),
    ("Recall", {}, "binary", False),
    ("Recall", {"thresholds": 0.7}, "binary", True),
    ("TruePositives", {}, "binary", False),
    ("FalsePositives", {"thresholds": [0.25, 0.5]}, "binary", False),
    ("TrueNegatives", {}, "binary", True),
    ("FalseNegatives", {}, "binary", False),
    ("PrecisionAtRecall", {"recall": 0.6}, "binary", False),
    ("RecallAtPrecision", {"precision": 0.7}, "binary", False),
    ("SensitivityAtSpecificity", {"specificity": 0.5}, "binary", False),
    ("SpecificityAtSensitivity", {"sensitivity": 0.5}, "binary", False),
    ("F1Score", {}, "onehot", False),
    ("F1Score", {"average": "macro", "threshold": 0.25}, "onehot", False),
    ("FBetaScore", {"average": "weighted", "beta": 2.0}, "onehot", True),
    ("F1Score", {"average": "micro"}, "binary", False),
    ("TopKCategoricalAccuracy", {"k": 2}, "onehot", False),
    ("SparseTopKCategoricalAccuracy", {"k": 2}, "sparse", True),
    ("RootMeanSquaredError", {}, "regress", False),
    ("RootMeanSquaredError", {}, "regress", True),
    ("MeanAbsolutePercentageError", {}, "regress", False),
    ("MeanSquaredLogarithmicError", {}, "regress", True),
    ("CosineSimilarity", {}, "regress", False),
    ("LogCoshError", {}, "regress", False),
    ("R2Score", {}, "regress", False),
    ("R2Score", {"class_aggregation": "variance_weighted_average"}, "regress", True),
    ("PearsonCorrelation", {}, "regress", False),
    ("ConcordanceCorrelation", {}, "regress", False),
    ("Hinge", {}, "binary", False),
    ("SquaredHinge", {}, "binary", False),
    ("CategoricalHinge", {}, "onehot", False),
    ("KLDivergence", {}, "onehot", False),
    ("Poisson", {}, "positive", False),
    ("BinaryCrossentropy", {}, "binary", True),
    ("CategoricalCrossentropy", {"label_smoothing": 0.1}, "onehot", False),
    ("SparseCategoricalCrossentropy", {}, "sparse", False),
    ("MeanIoU", {"num_classes": 4}, "iou", False),
    ("IoU", {"num_classes": 4, "target_class_ids": [0, 2]}, "iou", True),
    ("BinaryIoU", {}, "binary", False),
    ("BinaryIoU", {"target_class_ids": [1], "threshold": 0.6}, "binary", False),
    ("OneHotIoU", {"num_classes": 4, "target_class_ids": [0, 1]}, "onehot", False),
    ("OneHotMeanIoU", {"num_classes": 4}, "onehot", False),
]
INPUTS["iou"] = (np.array([0, 1, 2, 3, 1, 2], np.int32), np.array([0, 2, 2, 3, 1, 1], np.int32))
IOU_WEIGHT = np.array([1.0, 0.5, 2.0, 1.0, 1.0, 0.25], np.float32)
