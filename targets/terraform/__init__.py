"""Terraform: ``render`` writes ``terraform/main.tf.json`` from the lowered catalog objects;
``guard`` refuses a saved Terraform plan that would leave governed data unprotected.
"""
