"""Plans written for people and spreadsheets: CSV files and a self-contained HTML report."""
