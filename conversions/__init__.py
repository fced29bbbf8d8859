"""conversions"""
