"""The Table-QA prompt: ``{system_prompt}\\n\\n-----\\n\\n{table}\\n\\n-----\\n\\n{question}``."""

from __future__ import annotations

__all__ = ["SYSTEM_PROMPTS", "build_prompt", "prompt_prefix"]

SYSTEM_PROMPTS = {
    # the article's system prompt, translated
    "en": (
        "You are an expert in intelligent document processing. You are given a table from "
        "a document. Answer the question using ONLY the data from this table."
    ),
    # the article's original wording
    "ru": (
        "Ты — эксперт по интеллектуальной обработке документов. Тебе на вход передана "
        "таблица из документа. Ответь на вопрос, опираясь ТОЛЬКО на данные из этой таблицы."
    ),
}


def build_prompt(table_markdown: str, question: str, language: str = "en") -> str:
    """The article's prompt format with its system prompt in ``language`` (``en``/``ru``)."""
    return f"{SYSTEM_PROMPTS[language]}\n\n-----\n\n{table_markdown}\n\n-----\n\n{question}"


def prompt_prefix(table_markdown: str, language: str = "en") -> str:
    """Everything before the question: shared by all questions on one table."""
    return build_prompt(table_markdown, "", language)
