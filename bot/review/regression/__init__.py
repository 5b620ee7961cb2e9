"""The regression: sample events validated at base and head, with PySpark or in one process.

``review_stage`` is the class the App's worker instantiates once and passes to the pipeline.
"""

from bot.review.regression.stage import RegressionStage

review_stage = RegressionStage

__all__ = ["RegressionStage", "review_stage"]
